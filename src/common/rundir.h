/* rundir.h: the run directory's layout, written once. ncrun makes the
 * directory and writes env.json and summary.md; libncrt's processes write
 * their traces and private files there; ncrun's deep stage writes ncu/ or
 * nsys/; nctrace (summary, report) and `ncrewrite drill` read it back. The
 * Python side (the torch backend's export) names its private files with the
 * same prefix; tests/arch's run-dir-names checks that no file spells these
 * names as literals but the ones that must (Python), and that those agree
 * with this header. Header only: libncrt includes it without linking ncbase.
 *
 *   <run>/env.json                  provenance (ncrun): host, tools, command,
 *                                   options, stages
 *   <run>/<name>-rank<R>.pt.trace.json.gz   traces (ncrt_protocol.h)
 *   <run>/summary.md                nctrace summary of the traces
 *   <run>/.ncrt-*                   private: spill files .ncrt-h<HOST>-<PID>.*
 *                                   (HOST: hostid.h, so that two hosts'
 *                                   processes with one pid never meet), the
 *                                   disk budget's counter, the torch export's
 *                                   temporary files; gone after a good run
 *   <run>/ncu/, <run>/nsys/         the deep stage: kernels.tsv (stage 1's
 *                                   choice), the profiler's CSV and logs */
#ifndef NC_RUNDIR_H
#define NC_RUNDIR_H

#define NC_RUN_ENV "env.json"
#define NC_RUN_SUMMARY "summary.md"
#define NC_RUN_PRIVATE ".ncrt-" /* prefix of every private file */
#define NC_RUN_BUDGET NC_RUN_PRIVATE "budget"
#define NC_RUN_SPILL NC_RUN_PRIVATE "h" /* .ncrt-h<HOSTID>-<PID>.*: a process's spill set (hostid.h) */
#define NC_RUN_NCU_DIR "ncu"   /* the deep stage of --ncu (ncrun: the backend's name) */
#define NC_RUN_NSYS_DIR "nsys" /* and of --nsys */
#define NC_RUN_KERNELS "kernels.tsv"           /* in ncu/ or nsys/ */
#define NC_RUN_NCU_CSV "raw.csv"               /* in ncu/ */
#define NC_RUN_NSYS_CSV "stats_cuda_gpu_kern_sum.csv" /* in nsys/ (nctrace takes any *cuda_gpu_kern_sum*.csv) */

#endif
