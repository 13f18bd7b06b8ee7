/* polyred C API: compile fused deep-learning sub-graphs (elementwise ops feeding
 * reductions) into CUDA kernels and launch them on device pointers and a stream.
 *
 * A stable C ABI over libpolyred: opaque handles, status codes and message strings;
 * no exception ever crosses it. Graphs come as AKG/MindSpore composite JSON, from a file
 * or from memory (docs/format.md; the C++ builder, src/frontend/builder.h, and the
 * Python builder write the same format). Everything but polyred_launch works on a
 * machine without a GPU.
 *
 *   polyred_program* p;
 *   if (polyred_load_file("sum.json", NULL, &p) != POLYRED_OK) puts(polyred_last_error());
 *   polyred_launch(p, inputs, outputs, stream);   // device pointers, a CUstream
 *   polyred_program_free(p);
 *
 * Thread safety: a program may be launched from several threads and streams at once;
 * polyred_last_error() is per thread. */
#ifndef POLYRED_POLYRED_H
#define POLYRED_POLYRED_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define POLYRED_API __attribute__((visibility("default")))
#else
#define POLYRED_API
#endif

#define POLYRED_API_VERSION 3

typedef enum polyred_status {
  POLYRED_OK = 0,
  POLYRED_MISMATCH = 1,  /* a check found results that differ from the reference */
  POLYRED_BAD_INPUT = 2, /* malformed or out-of-scope graph, bad argument, over a budget */
  POLYRED_INTERNAL = 3,  /* a polyred bug */
  POLYRED_NO_GPU = 4     /* no usable GPU (the message says why) */
} polyred_status;

/* Element types; the values are stable. */
typedef enum polyred_dtype {
  POLYRED_BOOL = 0,
  POLYRED_INT8 = 1,
  POLYRED_UINT8 = 2,
  POLYRED_INT32 = 3,
  POLYRED_INT64 = 4,
  POLYRED_FLOAT16 = 5,
  POLYRED_BFLOAT16 = 6,
  POLYRED_FLOAT32 = 7,
  POLYRED_FLOAT64 = 8,
  POLYRED_COMPLEX64 = 9, /* two float32: real, imaginary */
  POLYRED_UINT16 = 10,
  POLYRED_UINT32 = 11,
  POLYRED_UINT64 = 12
} polyred_dtype;

typedef struct polyred_options {
  int deterministic;     /* bitwise-reproducible multi-block reductions (default 0) */
  int horizontal_fusion; /* independent kernels in one launch (default 1) */
  int cc_major, cc_minor; /* target when no GPU is queried (default 9.0); 0: the current GPU's */
  int sm_count;           /* SMs the binding assumes (default 132; 0: the current GPU's) */
} polyred_options;

typedef struct polyred_tensor_info {
  const char* name;     /* valid while the program lives */
  polyred_dtype dtype;
  int rank;
  const int64_t* shape; /* rank extents, valid while the program lives */
  int in_place_of_input; /* outputs: the input whose buffer it is written into, or -1 */
} polyred_tensor_info;   /* its layout is that of API version 1: callers built then stay valid */

/* The symbolic axes of a tensor of a symbolic program (polyred_num_symbols > 0; a
 * symbolic axis's entry in polyred_tensor_info's shape is -1): per axis, the size
 * symbol it holds and its coefficient (the axis is coefficient * the symbol's value),
 * or -1 and 1 for a constant axis. Valid while the program lives; both NULL for a
 * program without symbols. (API version 3.) */
typedef struct polyred_tensor_symbols {
  const int* shape_symbol;
  const int64_t* shape_coefficient;
} polyred_tensor_symbols;

typedef struct polyred_program polyred_program;

POLYRED_API const char* polyred_version(void);
POLYRED_API int polyred_api_version(void);
/* The message of the calling thread's last call ("" after a success, except that
 * polyred_check_cpu and polyred_sharded_check_cpu leave their comparison there). Valid
 * until the thread's next polyred call: copy it before calling again. Printable ASCII:
 * an error is one line; a comparison has one line per output, and NVRTC's log its own
 * lines, separated by '\n'. Bytes of names that are not printable are written %XX. */
POLYRED_API const char* polyred_last_error(void);
POLYRED_API void polyred_default_options(polyred_options* options);
/* The byte size of one element (0 for an unknown dtype), and its name ("float32"). */
POLYRED_API size_t polyred_dtype_size(polyred_dtype dtype);
POLYRED_API const char* polyred_dtype_name(polyred_dtype dtype);

/* Reads and compiles a composite file (options may be NULL: defaults). */
POLYRED_API polyred_status polyred_load_file(const char* path, const polyred_options* options,
                                             polyred_program** program);
/* The same from JSON text in memory; `label` names it in messages. */
POLYRED_API polyred_status polyred_load_json(const char* json, size_t length, const char* label,
                                             const polyred_options* options, polyred_program** program);
POLYRED_API void polyred_program_free(polyred_program* program);

POLYRED_API int polyred_num_inputs(const polyred_program* program);
POLYRED_API int polyred_num_outputs(const polyred_program* program);
POLYRED_API polyred_status polyred_input_info(const polyred_program* program, int index, polyred_tensor_info* info);
POLYRED_API polyred_status polyred_output_info(const polyred_program* program, int index, polyred_tensor_info* info);
POLYRED_API polyred_status polyred_input_symbols(const polyred_program* program, int index,
                                                 polyred_tensor_symbols* symbols);
POLYRED_API polyred_status polyred_output_symbols(const polyred_program* program, int index,
                                                  polyred_tensor_symbols* symbols);
/* Kernel launches per call (1 for most sub-graphs). */
POLYRED_API int polyred_num_launches(const polyred_program* program);
/* The generated CUDA of launch `index` (valid while the program lives), or NULL. */
POLYRED_API const char* polyred_cuda_source(const polyred_program* program, int index);

/* Enqueues the program on `stream` (a CUstream; NULL: the legacy default stream) and
 * returns at once. inputs[k] / outputs[k] are device pointers (CUdeviceptr values) of
 * the k-th input / output, contiguous, row-major; an in-place output is passed as its
 * input's pointer. No other buffers may overlap: an output's or an in-place input's
 * memory must be apart from every other argument's (the kernels read their inputs
 * while they write, and declare the pointers __restrict__). The first launch on a stream compiles (or loads from the kernel
 * cache) and allocates the program's workspaces; later ones allocate nothing. */
POLYRED_API polyred_status polyred_launch(polyred_program* program, void* const* inputs, void* const* outputs,
                                          void* stream);

/* ---- Symbolic sizes (API version 3) ----
 * A composite file may name a size symbol in a shape ("shape": ["S", 768]): the program
 * is compiled once for every value of it. Its entry points take the symbols' values,
 * `sizes[k]` for symbol k (num_sizes of them, >= 0), and the buffers of the tensors at
 * those sizes; the sizeless entry points refuse a symbolic program (POLYRED_BAD_INPUT). */
POLYRED_API int polyred_num_symbols(const polyred_program* program);
/* The name of size symbol `index` (valid while the program lives), or NULL. */
POLYRED_API const char* polyred_symbol_name(const polyred_program* program, int index);
POLYRED_API polyred_status polyred_launch_sized(polyred_program* program, void* const* inputs, void* const* outputs,
                                                void* stream, const int64_t* sizes, int num_sizes);
POLYRED_API polyred_status polyred_check_cpu_sized(const polyred_program* program, uint64_t seed, int64_t max_points,
                                                   const int64_t* sizes, int num_sizes);
POLYRED_API polyred_status polyred_run_cpu_sized(const polyred_program* program, const void* const* inputs,
                                                 void* const* outputs, const int64_t* sizes, int num_sizes);

/* Runs the lowered kernels on the CPU with seeded random inputs and compares them with
 * the reference interpreter (at most max_points statement instances; 0: all). Returns
 * POLYRED_OK when they match, POLYRED_MISMATCH (message: the comparison) when not. */
POLYRED_API polyred_status polyred_check_cpu(const polyred_program* program, uint64_t seed, int64_t max_points);

/* The CPU target: runs the program's lowered kernels (the very loop programs the GPU
 * launches, executed block by block on the host; slow, for tests and machines without a
 * GPU) on host memory. inputs[k] / outputs[k] are host pointers to contiguous row-major
 * elements of the k-th input / output; an in-place output is passed as its input's
 * pointer. Synchronous; no GPU, driver or NVRTC is touched. */
POLYRED_API polyred_status polyred_run_cpu(const polyred_program* program, const void* const* inputs,
                                           void* const* outputs);

/* ---- Reductions over tensors sharded across GPUs (docs/multigpu.md) ----
 * A sharded program is a loaded program lowered for `ranks` ranks: the inputs named in
 * `shards` are split along one axis (all the same way); every other input is held
 * whole by every rank. Each rank computes its local part, NCCL combines the partials,
 * and every rank ends with every output whole. NCCL (libnccl.so.2) is loaded at the
 * first launch; without it launches return POLYRED_NO_GPU saying so. */
typedef struct polyred_input_shard {
  const char* input;     /* a graph input's name */
  int axis;              /* negative counts from the end */
  const int64_t* sizes;  /* `ranks` extents (uneven splits), or NULL: even */
} polyred_input_shard;

typedef struct polyred_sharded polyred_sharded;

#define POLYRED_NCCL_UNIQUE_ID_BYTES 128

/* Lowers `program` (its options: deterministic mode gathers partials and combines them
 * in rank order, bitwise repeatable) for `ranks` ranks. POLYRED_BAD_INPUT names the
 * input and the reason for a sharding that cannot be (unknown input, axis out of
 * range, sizes not summing to the extent, more ranks than elements, ...). */
POLYRED_API polyred_status polyred_shard(const polyred_program* program, int ranks, const polyred_input_shard* shards,
                                         int count, polyred_sharded** sharded);
POLYRED_API void polyred_sharded_free(polyred_sharded* sharded);
/* The plan: rounds, the collective per reduction and why, outputs (valid while it lives). */
POLYRED_API const char* polyred_sharded_plan(const polyred_sharded* sharded);
/* The CPU simulation: every rank's lowered kernels on the CPU, partials combined in rank
 * order, compared with the unsharded reference on seeded random inputs. */
POLYRED_API polyred_status polyred_sharded_check_cpu(const polyred_sharded* sharded, uint64_t seed);
/* One process per GPU: rank 0 makes the id, the caller sends its bytes to the others. */
POLYRED_API polyred_status polyred_nccl_unique_id(unsigned char id[POLYRED_NCCL_UNIQUE_ID_BYTES]);
/* One process per GPU: enqueues this process's rank on `stream` (a CUstream on `device`).
 * The first call makes the communicator (ncclCommInitRank: every rank must call it) and
 * keeps it in `sharded`, whose later launches reuse it. inputs[k]: the rank's slice of a
 * split input, else the whole input; outputs[k]: the whole output. */
POLYRED_API polyred_status polyred_sharded_launch_rank(polyred_sharded* sharded,
                                                       const unsigned char id[POLYRED_NCCL_UNIQUE_ID_BYTES], int rank,
                                                       int device, void* const* inputs, void* const* outputs,
                                                       void* stream);
/* One process driving every rank: rank r on devices[r] (ncclCommInitAll at the first
 * call), inputs[r] / outputs[r] / streams[r] as above. */
POLYRED_API polyred_status polyred_sharded_launch_all(polyred_sharded* sharded, const int* devices,
                                                      void* const* const* inputs, void* const* const* outputs,
                                                      void* const* streams);

#ifdef __cplusplus
}
#endif

#endif /* POLYRED_POLYRED_H */
