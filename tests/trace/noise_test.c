/* noise_test: core/noise.h against values every statistics table prints,
 * so the verdicts of `nctrace diff` rest on a checked t distribution.
 * Exit 0, or 1 after naming each figure that is off. */
#include "noise.h"

#include <math.h>
#include <stdio.h>

static int fails;

static void near(const char *what, double got, double want, double tol) {
  if (fabs(got - want) > tol) {
    printf("FAIL: %s: %.10g, want %.10g\n", what, got, want);
    fails++;
  }
}

int main(void) {
  /* two-sided tails in closed form: 1 df (Cauchy) at 1 is 1/2; 4 df is
   * 1 - t/sqrt(4+t^2) * (1 + 2/(4+t^2)); 2 df is 1 - t/sqrt(2+t^2) */
  near("P(|T1| >= 1)", noise_t_two_sided(1, 1), 0.5, 1e-12);
  near("P(|T4| >= 2)", noise_t_two_sided(2, 4), 1 - 2 / sqrt(8.0) * 1.25, 1e-12);
  near("P(|T2| >= 3)", noise_t_two_sided(3, 2), 1 - 3 / sqrt(11.0), 1e-12);
  near("P(|Z| >= 1.959964)", noise_t_two_sided(1.959963985, INFINITY), 0.05, 1e-9);
  near("P(|T| >= 0)", noise_t_two_sided(0, 7), 1, 1e-15);
  /* 97.5 % quantiles (two-sided 5 %) from the t table */
  near("t(1)", noise_t_quantile(0.05, 1), 12.7062047, 1e-6);
  near("t(4)", noise_t_quantile(0.05, 4), 2.7764451, 1e-6);
  near("t(30)", noise_t_quantile(0.05, 30), 2.0422725, 1e-6);
  near("z", noise_t_quantile(0.05, INFINITY), 1.9599640, 1e-6);

  /* moments: merged halves equal one pass */
  const double x[] = {3, 7, 7, 19, 2.5, 11, 4};
  Moments all = {0}, lo = {0}, hi = {0};
  for (int i = 0; i < 7; i++) {
    moments_add(&all, x[i]);
    moments_add(i < 3 ? &lo : &hi, x[i]);
  }
  moments_merge(&lo, &hi);
  near("merged mean", lo.mean, all.mean, 1e-12);
  near("merged var", moments_var(&lo), moments_var(&all), 1e-9);
  near("var", moments_var(&all), 33.7261905, 1e-6); /* sample variance, n - 1 */

  /* Welch: equal variances and sizes give Student's t; exact sides */
  NoiseVerdict v;
  NoiseSide a = {10, 1, 9}, b = {13, 1, 9};
  noise_welch(&a, &b, NOISE_CALLS, &v);
  near("welch p", v.p, noise_t_two_sided(3 / sqrt(2.0), 18), 1e-12);
  near("welch lo", v.lo, 3 - noise_t_quantile(0.05, 18) * sqrt(2.0), 1e-9);
  if (v.sig != SIG_SIGNIFICANT) printf("FAIL: 3 over se 1.41 on 18 df is significant\n"), fails++;
  NoiseSide e1 = {5, 0, 0}, e2 = {5, 0, 0};
  noise_welch(&e1, &e2, NOISE_CALLS, &v);
  if (v.sig != SIG_NOISE || v.p != 1) printf("FAIL: no change, no spread: within noise\n"), fails++;
  e2.value = 6;
  noise_welch(&e1, &e2, NOISE_CALLS, &v);
  if (v.sig != SIG_SIGNIFICANT || v.p != 0) printf("FAIL: a change without spread is exact\n"), fails++;
  noise_unknown(&v);
  if (v.sig != SIG_UNKNOWN || !isnan(v.p)) printf("FAIL: unknown\n"), fails++;
  if (!fails) puts("ok");
  return fails != 0;
}
