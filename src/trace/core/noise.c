/* noise: moments and Welch's t-test (noise.h). The t distribution's tail
 * is the regularized incomplete beta function, evaluated by its continued
 * fraction (modified Lentz); its quantile by bisection on that tail, a
 * fixed number of halvings, so the result never depends on a starting
 * guess or on timing. */
#include "noise.h"

#include <math.h>

void moments_add(Moments *m, double x) {
  m->n++;
  double d = x - m->mean;
  m->mean += d / (double)m->n;
  m->m2 += d * (x - m->mean);
}

/* Chan et al.'s pairwise combination: exact for any split of a sample. */
void moments_merge(Moments *into, const Moments *o) {
  if (!o->n) return;
  if (!into->n) {
    *into = *o;
    return;
  }
  double na = (double)into->n, nb = (double)o->n, n = na + nb, d = o->mean - into->mean;
  into->mean += d * nb / n;
  into->m2 += o->m2 + d * d * na * nb / n;
  into->n += o->n;
}

double moments_var(const Moments *m) { return m->n < 2 ? 0 : (m->m2 > 0 ? m->m2 : 0) / (double)(m->n - 1); }

/* The continued fraction of I_x(a, b), valid (fast) for x < (a+1)/(a+b+2). */
static double beta_cf(double a, double b, double x) {
  const double tiny = 1e-300, eps = 1e-15;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (fabs(d) < tiny) d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 1000; m++) {
    double m2 = 2.0 * m;
    /* even step */
    double num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + num * d;
    if (fabs(d) < tiny) d = tiny;
    c = 1 + num / c;
    if (fabs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    /* odd step */
    num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + num * d;
    if (fabs(d) < tiny) d = tiny;
    c = 1 + num / c;
    if (fabs(c) < tiny) c = tiny;
    d = 1 / d;
    double step = d * c;
    h *= step;
    if (fabs(step - 1) < eps) break;
  }
  return h;
}

/* Regularized incomplete beta I_x(a, b), 0 <= x <= 1. */
static double ibeta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
  /* the fraction converges quickly on one side of the mean; the symmetry
   * I_x(a, b) = 1 - I_{1-x}(b, a) covers the other */
  if (x < (a + 1) / (a + b + 2)) return front * beta_cf(a, b, x) / a;
  return 1 - front * beta_cf(b, a, 1 - x) / b;
}

double noise_t_two_sided(double t, double df) {
  t = fabs(t);
  if (isinf(t)) return 0;
  if (isinf(df) || df > 1e7) return erfc(t / sqrt(2.0));
  return ibeta(df / 2, 0.5, df / (df + t * t));
}

double noise_t_quantile(double p, double df) {
  double lo = 0, hi = 1;
  while (noise_t_two_sided(hi, df) > p && hi < 1e12) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
    double mid = (lo + hi) / 2;
    if (noise_t_two_sided(mid, df) > p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

void noise_unknown(NoiseVerdict *out) {
  out->sig = SIG_UNKNOWN;
  out->method = NOISE_NONE;
  out->p = out->lo = out->hi = out->effect = NAN;
}

void noise_welch(const NoiseSide *a, const NoiseSide *b, NoiseMethod method, NoiseVerdict *out) {
  double delta = b->value - a->value, var = a->var + b->var;
  out->method = (uint8_t)method;
  out->effect = NAN;
  if (!(var > 0)) { /* both exact: any change is real */
    out->p = delta != 0 ? 0 : 1;
    out->lo = out->hi = delta;
    out->sig = delta != 0 ? SIG_SIGNIFICANT : SIG_NOISE;
    return;
  }
  /* Welch-Satterthwaite; a side with no variance adds no uncertainty and
   * no term */
  double den = 0;
  if (a->var > 0) den += a->var * a->var / a->df;
  if (b->var > 0) den += b->var * b->var / b->df;
  double df = var * var / den, se = sqrt(var);
  out->p = noise_t_two_sided(delta / se, df);
  double half = noise_t_quantile(NOISE_ALPHA, df) * se;
  out->lo = delta - half;
  out->hi = delta + half;
  out->sig = out->p < NOISE_ALPHA ? SIG_SIGNIFICANT : SIG_NOISE;
}

double noise_cohen_d(double mean_a, double sd_a, double mean_b, double sd_b) {
  double s = sqrt((sd_a * sd_a + sd_b * sd_b) / 2);
  return s > 0 ? (mean_b - mean_a) / s : NAN;
}

const char *significance_name(int sig) {
  return sig == SIG_SIGNIFICANT ? "significant" : sig == SIG_NOISE ? "within noise" : "unknown";
}

const char *significance_key(int sig) {
  return sig == SIG_SIGNIFICANT ? "significant" : sig == SIG_NOISE ? "within_noise" : "unknown";
}

const char *noise_method_name(int method) {
  return method == NOISE_CALLS ? "calls" : method == NOISE_RUNS ? "runs" : "none";
}
