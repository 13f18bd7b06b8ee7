// polyred command-line tool (placeholder until the pipeline lands).
#include <cstdio>
int main() { std::puts("polyred: pipeline not wired yet"); return 0; }
