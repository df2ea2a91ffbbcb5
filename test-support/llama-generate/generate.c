// llama.cpp's greedy generation, from the release node-llama-cpp ships prebuilt (its CPU backend):
// what llama.cpp's `llama-simple` example does, so the token ids printed are llama.cpp's own.
//   generate BACKEND_DIR MODEL N_PREDICT IGNORE_EOS PROMPT
// The prompt is tokenized as llama-simple and llama-cli tokenize it (add_special and parse_special:
// BOS where the vocabulary asks for it), decoded in one batch, then each token is picked by
// llama_sampler_init_greedy and fed back, until N_PREDICT tokens or (IGNORE_EOS 0) an
// end-of-generation token, which is printed and ends the list. Prints one JSON line on stdout:
// {"prompt":[ids],"tokens":[ids],"pieces":["hex", ...]}, each piece the bytes of
// llama_token_to_piece(special = false), as hex so no JSON escaping of raw bytes is needed.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama.h"

static void print_hex(const char *buf, int n) {
  putchar('"');
  for (int i = 0; i < n; i++) printf("%02x", (unsigned char)buf[i]);
  putchar('"');
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: generate BACKEND_DIR MODEL N_PREDICT IGNORE_EOS PROMPT\n");
    return 2;
  }
  const char *backends = argv[1];
  const char *path = argv[2];
  const int n_predict = atoi(argv[3]);
  const int ignore_eos = atoi(argv[4]) != 0;
  const char *prompt = argv[5];

  // The CPU backends are separate libraries, one per instruction set, that ggml loads by score.
  // ggml_backend_load_all_from_path lives in libggml, which libllama already loaded: taken by
  // name, so this program links to libllama alone.
  void (*load_all)(const char *) =
      (void (*)(const char *))dlsym(RTLD_DEFAULT, "ggml_backend_load_all_from_path");
  if (!load_all) {
    fprintf(stderr, "generate: ggml_backend_load_all_from_path not found: %s\n", dlerror());
    return 1;
  }
  load_all(backends);

  struct llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  struct llama_model *model = llama_model_load_from_file(path, mp);
  if (!model) {
    fprintf(stderr, "generate: could not load %s\n", path);
    return 1;
  }
  const struct llama_vocab *vocab = llama_model_get_vocab(model);
  const int len = (int)strlen(prompt);
  const int n_prompt = -llama_tokenize(vocab, prompt, len, NULL, 0, true, true);
  llama_token *tokens = malloc(sizeof(llama_token) * (size_t)(n_prompt + n_predict + 1));
  if (llama_tokenize(vocab, prompt, len, tokens, n_prompt, true, true) < 0) {
    fprintf(stderr, "generate: could not tokenize the prompt\n");
    return 1;
  }

  struct llama_context_params cp = llama_context_default_params();
  cp.n_ctx = (uint32_t)(n_prompt + n_predict);
  cp.n_batch = (uint32_t)n_prompt;
  cp.n_threads = 2;
  cp.n_threads_batch = 2;
  struct llama_context *ctx = llama_init_from_model(model, cp);
  if (!ctx) {
    fprintf(stderr, "generate: could not create the context\n");
    return 1;
  }
  struct llama_sampler *greedy = llama_sampler_chain_init(llama_sampler_chain_default_params());
  llama_sampler_chain_add(greedy, llama_sampler_init_greedy());

  printf("{\"prompt\":[");
  for (int i = 0; i < n_prompt; i++) printf("%s%d", i ? "," : "", tokens[i]);
  printf("],\"tokens\":[");
  llama_token *out = tokens + n_prompt;
  int n_out = 0;
  struct llama_batch batch = llama_batch_get_one(tokens, n_prompt);
  while (n_out < n_predict) {
    if (llama_decode(ctx, batch)) {
      fprintf(stderr, "generate: llama_decode failed\n");
      return 1;
    }
    llama_token id = llama_sampler_sample(greedy, ctx, -1);
    out[n_out] = id;
    printf("%s%d", n_out ? "," : "", id);
    n_out++;
    if (!ignore_eos && llama_vocab_is_eog(vocab, id)) break;
    batch = llama_batch_get_one(&out[n_out - 1], 1);
  }
  printf("],\"pieces\":[");
  for (int i = 0; i < n_out; i++) {
    char buf[256];
    int n = llama_token_to_piece(vocab, out[i], buf, sizeof buf, 0, false);
    if (n < 0) n = 0;
    if (i) putchar(',');
    print_hex(buf, n);
  }
  printf("]}\n");

  llama_sampler_free(greedy);
  llama_free(ctx);
  llama_model_free(model);
  free(tokens);
  return 0;
}
