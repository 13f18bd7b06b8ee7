/* consumer_c FILE: compiles a composite file with the installed libpolyred and checks
 * its kernels on the CPU against the reference (no GPU needed). */
#include <polyred/polyred.h>
#include <stdio.h>

int main(int argc, char** argv) {
  polyred_program* p;
  if (argc != 2 || polyred_load_file(argv[1], NULL, &p) != POLYRED_OK) return fprintf(stderr, "%s\n", polyred_last_error()), 2;
  polyred_status s = polyred_check_cpu(p, 1, 1 << 16);
  printf("%s: %d launch(es), CPU check %s\n", argv[1], polyred_num_launches(p), s == POLYRED_OK ? "ok" : polyred_last_error());
  polyred_program_free(p);
  return s;
}
