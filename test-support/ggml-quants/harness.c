// ggml's own quantizer and dequantizer, from the llama.cpp release's libggml-base.so, over data piped
// in: the reference the tests of src/quant compare against, bit for bit. Built and run by
// ggml-c.ts; nothing here decides a result.
//
//   harness traits
//       one line per code of enum ggml_type: code, type_name, blck_size, type_size, has_to_float
//   harness quantize TYPE NROWS N_PER_ROW WITH_IMATRIX
//       stdin: NROWS * N_PER_ROW f32, then N_PER_ROW f32 importance weights when WITH_IMATRIX is 1
//       stdout: the quantized rows (ggml_quantize_chunk), then their to_float (NROWS * N_PER_ROW f32)
//   harness dequantize TYPE NROWS N_PER_ROW
//       stdin: NROWS quantized rows; stdout: their to_float
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"

static void *read_exactly(size_t bytes) {
  void *buf = malloc(bytes ? bytes : 1);
  if (!buf || fread(buf, 1, bytes, stdin) != bytes) {
    fprintf(stderr, "harness: stdin ended before %zu bytes\n", bytes);
    exit(2);
  }
  return buf;
}

static void write_all(const void *buf, size_t bytes) {
  if (fwrite(buf, 1, bytes, stdout) != bytes) {
    fprintf(stderr, "harness: short write\n");
    exit(2);
  }
}

// Each row through to_float on its own, as a reader of a tensor row by row would call it.
static void dequantize_rows(enum ggml_type type, const char *blocks, int64_t nrows, int64_t n_per_row) {
  const struct ggml_type_traits *traits = ggml_get_type_traits(type);
  if (!traits->to_float) {
    fprintf(stderr, "harness: type %d has no to_float\n", (int)type);
    exit(2);
  }
  const size_t row_bytes = ggml_row_size(type, n_per_row);
  float *out = malloc(sizeof(float) * (size_t)(nrows * n_per_row) + 1);
  for (int64_t r = 0; r < nrows; r++) traits->to_float(blocks + r * row_bytes, out + r * n_per_row, n_per_row);
  write_all(out, sizeof(float) * (size_t)(nrows * n_per_row));
  free(out);
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "traits") == 0) {
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
      const struct ggml_type_traits *traits = ggml_get_type_traits((enum ggml_type)t);
      printf("%d\t%s\t%lld\t%zu\t%d\n", t, traits->type_name, (long long)traits->blck_size, traits->type_size,
             traits->to_float != NULL);
    }
    return 0;
  }
  if (argc == 6 && strcmp(argv[1], "quantize") == 0) {
    const enum ggml_type type = (enum ggml_type)atoi(argv[2]);
    const int64_t nrows = atoll(argv[3]), n_per_row = atoll(argv[4]);
    const int with_imatrix = atoi(argv[5]);
    float *src = read_exactly(sizeof(float) * (size_t)(nrows * n_per_row));
    float *imatrix = with_imatrix ? read_exactly(sizeof(float) * (size_t)n_per_row) : NULL;
    const size_t bytes = ggml_row_size(type, n_per_row) * (size_t)nrows;
    char *blocks = malloc(bytes + 1);
    const size_t written = ggml_quantize_chunk(type, src, blocks, 0, nrows, n_per_row, imatrix);
    if (written != bytes) {
      fprintf(stderr, "harness: ggml_quantize_chunk wrote %zu bytes, expected %zu\n", written, bytes);
      return 2;
    }
    write_all(blocks, bytes);
    dequantize_rows(type, blocks, nrows, n_per_row);
    return 0;
  }
  if (argc == 5 && strcmp(argv[1], "dequantize") == 0) {
    const enum ggml_type type = (enum ggml_type)atoi(argv[2]);
    const int64_t nrows = atoll(argv[3]), n_per_row = atoll(argv[4]);
    char *blocks = read_exactly(ggml_row_size(type, n_per_row) * (size_t)nrows);
    dequantize_rows(type, blocks, nrows, n_per_row);
    return 0;
  }
  fprintf(stderr, "usage: harness traits | quantize TYPE NROWS N_PER_ROW WITH_IMATRIX | dequantize TYPE NROWS N_PER_ROW\n");
  return 1;
}
