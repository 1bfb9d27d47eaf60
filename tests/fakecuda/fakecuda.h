/* fakecuda control API: what a test asks the stand-in libcuda.so.1 about itself.
 * These are exported by the fake only; a program that must also run on the real driver
 * should look them up with dlsym and cope with NULL. */
#ifndef FAKECUDA_H
#define FAKECUDA_H

#ifdef __cplusplus
extern "C" {
#endif

/* Calls made so far to the exported function of exactly this spelling
 * ("cuMemFreeAsync_ptsz" counts apart from "cuMemFreeAsync"); 0 for unknown names. */
unsigned long fakecuda_calls(const char *spelling);

/* Set every per-spelling counter back to 0. Driver state is left as it is. */
void fakecuda_reset_counts(void);

#ifdef __cplusplus
}
#endif

#endif
