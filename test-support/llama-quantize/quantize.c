// llama.cpp's own quantizer, from the release node-llama-cpp ships prebuilt: llama_model_quantize is
// what the llama-quantize tool calls, with its default parameters, so a file made here is the file
// `llama-quantize IN OUT TYPE` makes (checked byte for byte against a llama-quantize built from the
// same release: test-support/llama-quantize/README.md).
//   quantize IN OUT FTYPE [pure]
// FTYPE is enum llama_ftype's number (llama.h); "pure" quantizes every tensor to the type's base
// type, as `llama-quantize --pure` does, instead of the mix the ftype names (Q4_K_M: Q4_K and Q6_K).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama.h"

int main(int argc, char **argv) {
  if (argc < 4 || argc > 5) {
    fprintf(stderr, "usage: quantize IN OUT FTYPE [pure]\n");
    return 2;
  }
  llama_model_quantize_params params = llama_model_quantize_default_params();
  params.ftype = (enum llama_ftype)atoi(argv[3]);
  params.nthread = 1;
  params.pure = argc == 5 && strcmp(argv[4], "pure") == 0;
  return llama_model_quantize(argv[1], argv[2], &params) == 0 ? 0 : 1;
}
