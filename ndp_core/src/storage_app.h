/* The StorageApp ABI: how the engine calls one compiled kernel (docs/architecture.md).
 *
 * An app is a plain C function     int32_t app(AppCall* call);
 * typically a Numba `cfunc` with signature int32(CPointer(int64)): every field
 * of AppCall is one 8-byte word, so Numba code reads the struct as an int64
 * array (`numba.carray(call, APP_CALL_WORDS)`) and turns the pointer words into
 * arrays with a one-line inttoptr intrinsic. ndp_core.engine ships those
 * accessors (app_input, app_state, app_output, app_set_written, ...), so apps
 * never hard-code the word offsets below.
 *
 * Rules an app keeps: it holds no Python objects, allocates nothing, never
 * writes past an output's `capacity`, reports bytes written per output in
 * `written`, and returns one of the APP_* statuses. The engine snapshots the
 * instance state and counters before the call and restores them when the app
 * returns anything but APP_OK, so a caller can retry the same command (for
 * instance with larger outputs after APP_OUT_OF_SPACE) as if it never ran.
 */
#ifndef NDP_STORAGE_APP_H
#define NDP_STORAGE_APP_H

#include <stdint.h>

#define NDP_APP_ABI_VERSION 2

/* Statuses an app returns. The same numbers appear in completions. */
enum {
  APP_OK = 0,
  APP_NEEDS_MORE_INPUT = 1, /* the span ends inside a record; resubmit with more pages */
  APP_BAD_INPUT = 2,        /* `error_offset` holds the byte offset of the bad input */
  APP_OUT_OF_SPACE = 5      /* an output is too small; `written` may hold the size it needs */
};

/* One output buffer (host memory standing in for the DMA target). */
typedef struct AppOutput {
  uint8_t* data;
  int64_t capacity; /* bytes the app may write */
  int64_t written;  /* out: bytes the app wrote */
} AppOutput;

/* Everything one app call sees. Word offsets (for Numba) in comments. */
typedef struct AppCall {
  int64_t abi_version;    /*  0: NDP_APP_ABI_VERSION */
  int64_t opcode;         /*  1: the command running the app (MREAD, READ_PROC_TSK, ...) */
  int64_t task;           /*  2: Summarizer task number, -1 for Morpheus commands */
  int64_t first_page;     /*  3: logical page of input[0] within the stream */
  const uint8_t* input;   /*  4: the page bytes (read-only) */
  int64_t input_len;      /*  5 */
  int64_t at_eof;         /*  6: 1 when the input reaches the end of the stream */
  uint8_t* state;         /*  7: this instance's private state, zeroed at MINIT */
  int64_t state_size;     /*  8 */
  AppOutput* outputs;     /*  9: array of n_outputs descriptors (3 words each) */
  int64_t n_outputs;      /* 10 */
  int64_t* counters;      /* 11: work counters the app adds to */
  int64_t n_counters;     /* 12 */
  int64_t error_offset;   /* 13: out: offset in input of the bad byte (APP_BAD_INPUT) */
  const int64_t* args;    /* 14: the command's parameters (like NVMe's command dwords) */
  int64_t n_args;         /* 15 */
} AppCall;

#define NDP_APP_CALL_WORDS 16
#define NDP_APP_OUTPUT_WORDS 3

typedef int32_t (*StorageAppFn)(AppCall* call);

#endif /* NDP_STORAGE_APP_H */
