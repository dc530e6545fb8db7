/* deep_section: what Nsight Compute and Nsight Systems measured of the
 * kernels (core/deep.h), joined to the summary's kernel table: a section of
 * the summary document per CSV and the "ncu" / "nsys" arrays of its JSON.
 *
 * The CSVs are the ones named (--ncu, --nsys) or, for a kind none is named
 * of, the ones ncrun --ncu / --nsys leave in the run directory of each
 * trace: RUNDIR/ncu/raw.csv and RUNDIR/nsys/ *cuda_gpu_kern_sum*.csv (a
 * trace's run directory is the directory it is in). The range glob of a
 * section is the "# pattern\t<glob>" line of kernels.tsv beside its CSV.
 *
 * A kernel of the trace and one of a CSV are the same when their
 * deep_kernel_key is; failing that, when their deep_kernel_base is and it
 * names exactly one unjoined kernel on each side (on the trace's side among
 * the kernels kernels.tsv lists, when there is one: the trace has many
 * instantiations of at::elementwise_kernel, the range few).
 *
 * Ownership: a Deep owns its data; deep_free releases it. */
#ifndef NCT_DEEP_SECTION_H
#define NCT_DEEP_SECTION_H

#include "analyze.h"
#include "deep.h"
#include "doc.h"

typedef VEC(char *) Chosen; /* kernels.tsv's kernel rows: stage 1's choice, as the trace spells them */

typedef struct {
  char *pattern; /* kernels.tsv's "# pattern" beside the CSV; NULL if none */
  Chosen chosen;
  NcuData data;
} DeepNcu;

typedef struct {
  char *pattern;
  Chosen chosen;
  NsysData data;
} DeepNsys;

typedef struct Deep {
  VEC(DeepNcu) ncu;
  VEC(DeepNsys) nsys;
} Deep;

/* Load the named CSVs; for a kind with none named, look beside each trace
 * of m. 0, or -1 (reported at the CSV's file:line:col). */
int deep_load(const Model *m, const char *const *ncu, size_t nncu, const char *const *nsys, size_t nnsys,
              Deep *out);
bool deep_any(const Deep *deep);
/* One section per CSV, after the summary's GPU sections. */
void deep_doc(Doc *d, const Model *m, const Summary *s, const Deep *deep);
/* "ncu":[...],"nsys":[...], each with a trailing ',' (the kinds loaded
 * only), for summary_json's "structured" object. */
void deep_json(Buf *b, const Model *m, const Summary *s, const Deep *deep);
void deep_free(Deep *deep);

#endif
