/* noise: is a change between two runs larger than their noise? The
 * statistics behind `nctrace diff`'s verdicts (docs/nctrace.md, "Noise").
 *
 * Moments: a sample's count, mean and sum of squared deviations (Welford's
 * update, Chan's merge), so per-call spreads are kept in constant memory
 * per name, never per event.
 *
 * The test: each side brings an estimate of its figure, the variance of
 * that estimate and the degrees of freedom of the variance; the change
 * B - A is judged by Welch's t-test (unequal variances, Welch-Satterthwaite
 * degrees of freedom), two-sided, at NOISE_ALPHA. Everything is closed
 * form or a fixed iteration: the same inputs give the same verdict, on
 * every machine, with no random numbers.
 *
 * Pure computation: nothing allocated, nothing printed. */
#ifndef NCT_NOISE_H
#define NCT_NOISE_H

#include <stdbool.h>
#include <stdint.h>

/* Two-sided significance level; the interval is the matching 95 %. */
#define NOISE_ALPHA 0.05

typedef struct {
  uint64_t n;
  double mean, m2; /* m2: sum of squared deviations from the mean */
} Moments;

void moments_add(Moments *m, double x);
void moments_merge(Moments *into, const Moments *other);
/* Sample variance (n - 1 in the denominator); 0 when n < 2. */
double moments_var(const Moments *m);

/* One side's estimate: value, the variance of that estimate, and the
 * degrees of freedom of the variance (0 when var is exactly known to be 0,
 * e.g. a name absent on that side). */
typedef struct {
  double value, var, df;
} NoiseSide;

typedef enum { SIG_UNKNOWN, SIG_NOISE, SIG_SIGNIFICANT } Significance;
typedef enum { NOISE_NONE, NOISE_CALLS, NOISE_RUNS } NoiseMethod;

typedef struct {
  uint8_t sig;     /* Significance */
  uint8_t method;  /* NoiseMethod: where the variances came from */
  double p;        /* two-sided p-value (NaN when unknown) */
  double lo, hi;   /* 95 % interval of the change B - A, the figure's unit (NaN when unknown) */
  double effect;   /* standardized effect size, Cohen's d: set by the caller,
                    * which knows the samples (NaN when undefined) */
} NoiseVerdict;

/* The verdict for B - A (effect left NaN). Both variances 0: the change
 * is exact, significant unless it is 0. */
void noise_welch(const NoiseSide *a, const NoiseSide *b, NoiseMethod method, NoiseVerdict *out);
/* Cohen's d: (mean_b - mean_a) over the root mean square of the two
 * standard deviations; NaN when that is 0. */
double noise_cohen_d(double mean_a, double sd_a, double mean_b, double sd_b);
/* The verdict that says no estimate could be made. */
void noise_unknown(NoiseVerdict *out);

/* Student's t distribution: P(|T| >= t) with df degrees of freedom
 * (df = INFINITY: the normal distribution), and the t with
 * P(|T| >= t) = p. Exposed for the tests. */
double noise_t_two_sided(double t, double df);
double noise_t_quantile(double p, double df);

const char *significance_name(int sig); /* "significant", "within noise", "unknown" */
const char *significance_key(int sig);  /* JSON: "significant", "within_noise", "unknown" */
const char *noise_method_name(int method); /* "calls", "runs", "none" */

#endif
