/* ncrun: run a command with the ncrt collector attached.
 *
 *   ncrun [options] -- cmd args...
 *
 * Creates one run directory (<output>/<name>-<date>-<time>), writes its
 * provenance there (env.json: host, GPU, driver/CUDA/CUPTI versions, the
 * relevant environment, the command line, the options; a copy of the rules
 * file when given), points NVTX_INJECTION64_PATH and CUDA_INJECTION64_PATH
 * at libncrt, puts the ncrt Python module (and a rewritten shadow tree) on
 * PYTHONPATH, runs the command and exits with its status. Every process of
 * the command (torchrun / mpirun ranks, forks) writes
 * <name>-rank<R>.pt.trace.json.gz into the same run directory; ncrun lists them
 * at the end. Its own messages go to stderr, prefixed "ncrun:". */
#define _GNU_SOURCE
#include <cjson/cJSON.h>

#include "ncbase.h"
#include "ncrt_protocol.h"
#include "ncrun.h"
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
    "usage: ncrun [options] -- cmd args...\n"
    "  -o, --output DIR        root for run directories (default $NCRT_OUTPUT_ROOT, else ./ncrt-runs)\n"
    "      --run-dir DIR       use exactly this run directory\n"
    "  -n, --name NAME         trace name (default: the script or program name)\n"
    "  -a, --activities LIST   cpu,gpu,mem (default cpu,gpu)\n"
    "      --schedule SPEC     wait=W,warmup=U,active=A,repeat=R (or W,U,A[,R]) over steps\n"
    "      --step NAME         a range named NAME starts a step (default: ncrt_step()/ncrt.step())\n"
    "      --capture-range PAT record only while a range matching PAT (fnmatch) is open\n"
    "      --throttle N[:US]   stop recording a name after N calls (with :US, only if their\n"
    "                          exclusive mean was under US us; default 100000; 'off' disables)\n"
    "      --disk-budget SIZE  records the run may spill (512M, 2G; 'off'): past it, recording\n"
    "                          stops and the trace says when (default: 8G or half the free space)\n"
    "      --rules FILE        rules used to instrument the program (copied into the run)\n"
    "      --shadow DIR        rewritten Python tree, put first on PYTHONPATH\n"
    "      --torch             ncrt.range also opens torch.profiler.record_function\n"
    "      --no-preload        do not LD_PRELOAD libncrt (traces are then lost on _exit)\n"
    "      --summary           write summary.md (nctrace summary of the traces) at the end\n"
    "                          (default with --ncu/--nsys; --no-summary: never)\n"
    "backends (docs/deep-profiling.md):\n"
    "      --backend NAME      ncrt (default: our collector), torch (torch.profiler, Python programs),\n"
    "                          ncu or nsys (stage 1 under ncrt, stage 2 under the profiler)\n"
    "      --ncu GLOB          Nsight Compute on the top kernels inside ranges matching GLOB\n"
    "      --nsys GLOB         Nsight Systems, capture gated on the range GLOB names\n"
    "      --top N             kernels to profile under ncu (default 5; 0: no kernel filter)\n"
    "      --set SET           ncu section set (basic, roofline, full, ...) or Section,Section (default basic)\n"
    "      --launch-count N    ncu profiles at most N launches per launch configuration (default 5)\n"
    "      --trace FILE        reuse this stage-1 trace instead of running stage 1\n"
    "      --with-stack        torch backend: record Python stacks\n"
    "      --record-shapes     torch backend: record operator input shapes\n"
    "      --gzip-level N      zlib level for traces (default 1)\n"
    "      --finalize RUNDIR   write the traces of processes that died in RUNDIR, or whose exit left\n"
    "                          them to ncrun (done after every run)\n"
    "  -q, --quiet             no ncrun messages\n"
    "  -V, --version           print the version\n";

static int preload = 1;

#define say ncrun_say
#define exists ncrun_exists
#define mkdirs ncrun_mkdirs



/* FNV-1a 64 of a file's bytes as 16 hex digits (env.json's hashes) */
static void file_hash(const char *text, size_t len, char hex[17]) {
  snprintf(hex, 17, "%016llx", (unsigned long long)fnv1a64(text ? text : "", len));
}

/* libncrt.so and the Python module are found from this executable's own
 * directory: beside it in the build tree (<build>/ncrt/), or at the paths
 * the install rules give relative to bin/ (NCRUN_REL_LIB, NCRUN_REL_PY:
 * ../lib and ../lib/ncrewrite/python), so an installed prefix can move. */
#ifndef NCRUN_REL_LIB
#define NCRUN_REL_LIB "../lib"
#endif
#ifndef NCRUN_REL_PY
#define NCRUN_REL_PY "../lib/ncrewrite/python"
#endif
static void find_runtime(char *lib, char *pydir, size_t n) {
  char exe[PATH_MAX];
  ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[k > 0 ? k : 0] = 0;
  char *dir = dirname(exe);
  snprintf(lib, n, "%s/libncrt.so", dir);
  snprintf(pydir, n, "%s/python", dir);
  if (!exists(lib)) {
    snprintf(lib, n, "%s/" NCRUN_REL_LIB "/libncrt.so", dir);
    snprintf(pydir, n, "%s/" NCRUN_REL_PY, dir);
  }
  char real[PATH_MAX];
  if (realpath(lib, real)) snprintf(lib, n, "%s", real);
  if (realpath(pydir, real)) snprintf(pydir, n, "%s", real);
}

static const char *find_cupti(void) {
  static const char *const c[] = {"/usr/local/cuda/lib64/libcupti.so.13",
                                  "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
                                  "/usr/local/cuda/lib/libcupti.so.13",
                                  "/usr/local/cuda-13.0/lib/libcupti.so.13",
                                  "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13",
                                  "/usr/lib/x86_64-linux-gnu/libcupti.so.13",
                                  NULL};
  for (int i = 0; c[i]; i++)
    if (exists(c[i])) return c[i];
  return NULL;
}

static void prepend(const char *var, const char *dir) {
  const char *old = getenv(var);
  if (!old || !*old) {
    setenv(var, dir, 1);
    return;
  }
  size_t n = strlen(dir) + strlen(old) + 2;
  char *v = malloc(n);
  if (!v) return;
  snprintf(v, n, "%s:%s", dir, old);
  setenv(var, v, 1);
  free(v);
}


/* The trace's name: the script (x.py, -m module) or the program; behind a
 * launcher (mpirun -np 4 ./solver, srun -n 2 ./a.out) the program it
 * launches, not the launcher. `python -m pkg` -> pkg, `python x/train.py`
 * -> train, `torchrun ... train.py` -> train, `./a.out` -> a.out. */
static void default_name(char **argv, char *out, size_t n) {
  static const char *const launchers[] = {"mpirun", "mpiexec", "orterun", "prterun", "srun", "jsrun", "aprun",
                                          "torchrun", "horovodrun", "deepspeed", "numactl", "taskset",
                                          "nsys", "env", "time", "nice", "stdbuf", NULL};
  const char *pick = argv[0];
  const char *b0 = strrchr(argv[0], '/');
  b0 = b0 ? b0 + 1 : argv[0];
  int launcher = 0;
  for (int k = 0; launchers[k] && !launcher; k++) launcher = !strcmp(b0, launchers[k]);
  for (int i = launcher; launcher && argv[i]; i++) {
    const char *a = argv[i];
    /* an option's value that is a program name (mpirun --hostfile h) is
     * skipped only when it does not run: good enough for the usual forms */
    char path[PATH_MAX];
    if (a[0] == '-' || strchr(a, '=') || !ncrun_resolve_cmd(a, path, sizeof path)) continue;
    pick = a;
    break;
  }
  for (int i = 0; argv[i]; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-m") && argv[i + 1]) {
      pick = argv[i + 1];
      break;
    }
    size_t l = strlen(a);
    if (l > 3 && !strcmp(a + l - 3, ".py")) {
      pick = a;
      break;
    }
  }
  const char *b = strrchr(pick, '/');
  snprintf(out, n, "%s", b ? b + 1 : pick);
  size_t l = strlen(out);
  if (l > 3 && !strcmp(out + l - 3, ".py")) out[l - 3] = 0;
}

static void add_file_string(cJSON *o, const char *key, const char *path) {
  char *s = ncrun_read_file(path, NULL);
  if (!s) return;
  s[strcspn(s, "\n")] = 0;
  cJSON_AddStringToObject(o, key, s);
  free(s);
}

/* What the run was made from, for drill and prune to refuse a stale trace:
 * the shadow tree's manifest (FNV-1a 64 of its bytes, the same hash drill
 * computes) and the digest of the rules it was written with. */
static void add_shadow_info(cJSON *root, const char *shadow) {
  char path[PATH_MAX + 32], real[PATH_MAX];
  if (!shadow || !realpath(shadow, real)) return;
  snprintf(path, sizeof path, "%s/.ncrewrite/manifest.json", real);
  size_t len;
  char *all = ncrun_read_file(path, &len);
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "dir", real);
  if (all) {
    char hex[17];
    file_hash(all, len, hex);
    cJSON_AddStringToObject(o, "manifest", hex);
    cJSON *m = cJSON_Parse(all);
    cJSON *rd = m ? cJSON_GetObjectItem(m, "rules_digest") : NULL;
    if (cJSON_IsString(rd)) cJSON_AddStringToObject(o, "rules_digest", rd->valuestring);
    cJSON_Delete(m);
    free(all);
  }
  cJSON_AddItemToObject(root, "shadow", o);
}

/* env.json: the run's provenance. Built once before the first stage, kept
 * in memory and written again after every stage (the stages array: argv,
 * status, seconds), so a run that dies midway still says what ran. */
static cJSON *env_json(char **argv, cJSON *opts, const char *lib, const char *cupti, const char *shadow,
                       const char *backend) {
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "backend", backend);
  struct utsname u;
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  cJSON_AddStringToObject(root, "host", host);
  if (uname(&u) == 0) {
    char k[600];
    snprintf(k, sizeof k, "%s %s %s", u.sysname, u.release, u.machine);
    cJSON_AddStringToObject(root, "kernel", k);
  }
  time_t now = time(NULL);
  char ts[64];
  strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S%z", localtime(&now));
  cJSON_AddStringToObject(root, "started", ts);
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd)) cJSON_AddStringToObject(root, "cwd", cwd);
  cJSON *cmd = cJSON_AddArrayToObject(root, "command");
  for (int i = 0; argv[i]; i++) cJSON_AddItemToArray(cmd, cJSON_CreateString(argv[i]));
  cJSON_AddItemToObject(root, "options", opts);
  add_shadow_info(root, shadow);
  cJSON_AddStringToObject(root, "libncrt", lib);

  cJSON *gpu = cJSON_AddObjectToObject(root, "gpu");
  add_file_string(gpu, "driver", "/proc/driver/nvidia/version");
  cJSON *devs = cJSON_AddArrayToObject(gpu, "devices");
  DIR *d = opendir("/proc/driver/nvidia/gpus");
  if (d) {
    struct dirent *e;
    while ((e = readdir(d)))
      if (e->d_name[0] != '.') {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "/proc/driver/nvidia/gpus/%s/information", e->d_name);
        char *info = ncrun_read_file(p, NULL);
        if (info) {
          cJSON_AddItemToArray(devs, cJSON_CreateString(info));
          free(info);
        }
      }
    closedir(d);
  }
  char *cv = ncrun_read_file("/usr/local/cuda/version.json", NULL);
  if (cv) {
    cJSON *j = cJSON_Parse(cv);
    cJSON *c = j ? cJSON_GetObjectItem(j, "cuda") : NULL;
    cJSON *v = c ? cJSON_GetObjectItem(c, "version") : NULL;
    if (cJSON_IsString(v)) cJSON_AddStringToObject(gpu, "cuda_toolkit", v->valuestring);
    cJSON *cu = j ? cJSON_GetObjectItem(j, "cuda_cupti") : NULL;
    v = cu ? cJSON_GetObjectItem(cu, "version") : NULL;
    if (cJSON_IsString(v)) cJSON_AddStringToObject(gpu, "cupti", v->valuestring);
    cJSON_Delete(j);
    free(cv);
  }
  cJSON_AddStringToObject(gpu, "cupti_library", cupti ? cupti : "not found");
  cJSON_AddStringToObject(gpu, "note", "the CUPTI API version in use is in each trace (ncrt.cupti_version)");

  static const char *const prefixes[] = {"NCRT_", "NVTX_", "CUDA_", "NCCL_", "RANK", "LOCAL_RANK", "WORLD_SIZE",
                                         "LOCAL_WORLD_SIZE", "MASTER_", "SLURM_", "OMPI_", "PMI_", "TORCH",
                                         "PYTHONPATH", "LD_LIBRARY_PATH", "PATH", "OMP_NUM_THREADS", NULL};
  cJSON *env = cJSON_AddObjectToObject(root, "env");
  extern char **environ;
  for (char **e = environ; *e; e++)
    for (int i = 0; prefixes[i]; i++)
      if (!strncmp(*e, prefixes[i], strlen(prefixes[i]))) {
        char *eq = strchr(*e, '=');
        if (!eq) break;
        char key[256];
        snprintf(key, sizeof key, "%.*s", (int)(eq - *e), *e);
        cJSON_AddStringToObject(env, key, eq + 1);
        break;
      }
  cJSON_AddObjectToObject(root, "tools");
  cJSON_AddArrayToObject(root, "stages");
  return root;
}

void ncrun_save_env(const char *dir, cJSON *env) {
  char *text = cJSON_Print(env);
  char path[PATH_MAX + 16], tmp[PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/env.json", dir);
  snprintf(tmp, sizeof tmp, "%s/.env.json.tmp", dir);
  FILE *f = fopen(tmp, "w");
  int ok = f && text && fputs(text, f) >= 0 && fputc('\n', f) != EOF;
  if (f && fclose(f) != 0) ok = 0;
  if (!ok || rename(tmp, path) != 0) {
    say("cannot write %s: %s", path, strerror(errno));
    unlink(tmp);
  }
  free(text);
}

/* The rules file's FNV-1a 64 (the hash the manifest uses), for env.json. */
static void add_rules_info(cJSON *env, const char *rules) {
  size_t len;
  char *all = rules ? ncrun_read_file(rules, &len) : NULL;
  if (!all) return;
  char real[PATH_MAX], hex[17];
  file_hash(all, len, hex);
  cJSON *o = cJSON_AddObjectToObject(env, "rules");
  cJSON_AddStringToObject(o, "file", realpath(rules, real) ? real : rules);
  cJSON_AddStringToObject(o, "fnv1a64", hex);
  free(all);
}

static void copy_file(const char *from, const char *dir) {
  char *b = xstrdup(from), path[2 * PATH_MAX];
  snprintf(path, sizeof path, "%s/%s", dir, basename(b));
  free(b);
  FILE *in = fopen(from, "rb"), *out = in ? fopen(path, "wb") : NULL;
  if (!in || !out) {
    say("cannot copy %s into the run directory: %s", from, strerror(errno));
    if (in) fclose(in);
    return;
  }
  /* a copy that is not whole (a full disk) is removed: the run directory
   * has the rules or says it has not */
  char buf[65536];
  size_t n;
  int err = 0;
  while (!err && (n = fread(buf, 1, sizeof buf, in)) > 0)
    if (fwrite(buf, 1, n, out) != n) err = errno ? errno : EIO;
  if (!err && ferror(in)) err = errno ? errno : EIO;
  fclose(in);
  if (fclose(out) != 0 && !err) err = errno ? errno : EIO;
  if (err) {
    say("cannot copy %s into the run directory: %s", from, strerror(err));
    unlink(path);
  }
}

/* ---- Can the program's Python import ncrt? ----
 *
 * When the command is a Python interpreter (python, python3, python3.X, or
 * a script whose #! line names one), that interpreter is run once before
 * the program, with the environment the program gets (PYTHONPATH and the
 * interpreter's -I/-E/-s/-S flags; no collector attached), to import ncrt.
 * If it cannot, one warning says which interpreter, its version and why,
 * and the program runs anyway: otherwise the user learns only "no trace was
 * written" afterwards, or a trace without the Python ranges. */

static const char py_check_src[] =
    "import sys, os\n"
    "d = sys.argv[1]\n"
    "impl = getattr(getattr(sys, 'implementation', None), 'name', 'python')\n"
    "impl = {'cpython': 'CPython', 'pypy': 'PyPy'}.get(impl, impl)\n"
    "v = '%s, %s %d.%d.%d' % ((sys.executable, impl) + tuple(sys.version_info[:3]))\n"
    "sys.stdout.write('\\n@@ncrun-version ' + v + '\\n')\n"
    "sys.stdout.flush()\n"
    "try:\n"
    "    import ncrt\n"
    "    sys.stdout.write('@@ncrun-result ok\\n')\n"
    "except Exception as e:\n"
    "    import re\n"
    "    try:\n"
    "        import sysconfig\n"
    "        suf = sysconfig.get_config_var('EXT_SUFFIX')\n"
    "    except Exception:\n"
    "        suf = None\n"
    "    have = sorted(os.listdir(d)) if os.path.isdir(d) else []\n"
    "    built = sorted(set((int(m.group(1)), int(m.group(2))) for m in\n"
    "                       (re.match(r'ncrt\\.cpython-(\\d)(\\d+)', f) for f in have) if m))\n"
    "    if sys.flags.ignore_environment:\n"
    "        why = 'it ignores PYTHONPATH (-I or -E), where ncrun puts ncrt (%s)' % d\n"
    "    elif isinstance(e, ImportError) and getattr(e, 'name', None) == 'ncrt' and suf \\\n"
    "            and not os.path.exists(os.path.join(d, 'ncrt' + suf)):\n"
    "        why = 'ncrt has no build for %s %d.%d (looked in %s for ncrt%s; built for: %s)' % (\n"
    "            impl, sys.version_info[0], sys.version_info[1], d, suf,\n"
    "            ', '.join('%d.%d' % b for b in built) or 'none')\n"
    "    else:\n"
    "        why = '%s: %s' % (type(e).__name__, e)\n"
    "    sys.stdout.write('@@ncrun-result ' + why.replace('\\n', ' ') + '\\n')\n";

static int python_name(const char *path) {
  const char *b = strrchr(path, '/');
  b = b ? b + 1 : path;
  if (strncmp(b, "python", 6)) return 0;
  return b[6 + strspn(b + 6, "0123456789.")] == 0;
}


/* Collect the interpreter flags that change what it imports (-I -E -s -S)
 * from a Python command line's options, up to the script, -c or -m. */
static void py_flags(char **args, char *flags, size_t n) {
  size_t k = 0;
  for (; *args && (*args)[0] == '-' && (*args)[1] && strcmp(*args, "--") && strcmp(*args, "-"); args++) {
    if ((*args)[1] == '-') continue; /* --long options take no value worth following */
    for (const char *p = *args + 1; *p; p++) {
      if (strchr("IEsS", *p)) {
        if (k + 1 < n && !memchr(flags, *p, k)) flags[k++] = *p;
      } else if (*p == 'c' || *p == 'm') {
        flags[k] = 0;
        return;
      } else if (*p == 'W' || *p == 'X') { /* these take a value */
        if (!p[1] && args[1]) args++;
        break;
      }
    }
  }
  flags[k] = 0;
}

/* --shadow puts the instrumented tree first on PYTHONPATH, but Python puts
 * the script's directory (or, for -m and -c, the current one) ahead of
 * PYTHONPATH: run from inside the source tree, the originals are imported
 * and nothing is recorded. Say so before the run when that directory holds
 * a module or package the shadow tree has. */
static void check_shadow(char **cmd, const char *shadow) {
  if (!python_name(cmd[0])) return;
  char first[PATH_MAX] = "", why_dir[64] = "the current directory", script_name[PATH_MAX] = "", top[256] = "";
  int k = 1;
  for (; cmd[k]; k++) {
    const char *a = cmd[k];
    if (!strcmp(a, "-m") || !strcmp(a, "-c") || (a[0] == '-' && strpbrk(a + 1, "cm") && a[1] != '-' &&
                                                 strcspn(a + 1, "cm") < strcspn(a + 1, "WX"))) {
      if (!getcwd(first, sizeof first)) return;
      if (!strcmp(a, "-m") && cmd[k + 1]) snprintf(top, sizeof top, "%.*s", (int)strcspn(cmd[k + 1], "."), cmd[k + 1]);
      break;
    }
    if ((!strcmp(a, "-W") || !strcmp(a, "-X")) && cmd[k + 1]) {
      k++;
      continue;
    }
    if (a[0] == '-') {
      if (strchr(a, 'I') || strchr(a, 'P')) return; /* -I, -P: no such directory on sys.path */
      continue;
    }
    char real[PATH_MAX];
    if (!realpath(a, real)) return;
    const char *base = strrchr(real, '/');
    snprintf(script_name, sizeof script_name, "%s", base ? base + 1 : real);
    snprintf(first, sizeof first, "%s", dirname(real));
    snprintf(why_dir, sizeof why_dir, "the script's directory");
    break;
  }
  if (!first[0]) return;
  char rs[PATH_MAX], rf[PATH_MAX];
  if (!realpath(shadow, rs) || !realpath(first, rf) || !strcmp(rs, rf)) return;
  DIR *d = top[0] ? NULL : opendir(rs); /* -m pkg.mod: pkg is the one that counts */
  struct dirent *e, one;
  if (top[0]) snprintf(one.d_name, sizeof one.d_name, "%s", top);
  for (int first_pass = 1; top[0] ? first_pass : (d && (e = readdir(d))) != 0; first_pass = 0) {
    if (top[0]) e = &one;
    if (e->d_name[0] == '.' || !strcmp(e->d_name, "__pycache__") || !strcmp(e->d_name, script_name)) continue;
    size_t l = strlen(e->d_name);
    char in_shadow[2 * PATH_MAX], in_first[2 * PATH_MAX];
    snprintf(in_shadow, sizeof in_shadow, "%s/%s", rs, e->d_name);
    snprintf(in_first, sizeof in_first, "%s/%s", rf, e->d_name);
    struct stat st;
    int module = (l > 3 && !strcmp(e->d_name + l - 3, ".py")) ||
                 (stat(in_shadow, &st) == 0 && S_ISDIR(st.st_mode));
    if (!module || !exists(in_first)) continue;
    say("%s will be imported, not the instrumented %s: Python puts %s (%s) ahead of --shadow on sys.path, "
        "so nothing there is recorded; run from another directory, or run the shadow's copy of the script",
        in_first, in_shadow, rf, why_dir);
    break;
  }
  if (d) closedir(d);
}

static void check_python(char **cmd, const char *pydir) {
  char interp[PATH_MAX], flags[8] = "", script[PATH_MAX];
  if (python_name(cmd[0])) {
    snprintf(interp, sizeof interp, "%s", cmd[0]);
    py_flags(cmd + 1, flags, sizeof flags);
  } else {
    /* a script with a #! line naming python (directly or through env) */
    if (!ncrun_resolve_cmd(cmd[0], script, sizeof script)) return;
    FILE *f = fopen(script, "rb");
    char line[512] = "";
    if (!f) return;
    if (!fgets(line, sizeof line, f)) line[0] = 0;
    fclose(f);
    if (strncmp(line, "#!", 2)) return;
    line[strcspn(line, "\r\n")] = 0;
    char *save = NULL, *tok = strtok_r(line + 2, " \t", &save);
    if (!tok) return;
    if (!strcmp(tok + (strrchr(tok, '/') ? strrchr(tok, '/') - tok + 1 : 0), "env")) {
      do tok = strtok_r(NULL, " \t", &save); /* env's own options, env -S */
      while (tok && tok[0] == '-');
      if (!tok) return;
    }
    if (!python_name(tok)) return;
    snprintf(interp, sizeof interp, "%s", tok);
    char *rest[8] = {0};
    for (int r = 0; r < 7 && (rest[r] = strtok_r(NULL, " \t", &save)); r++) {
    }
    py_flags(rest, flags, sizeof flags);
  }

  int fd[2];
  if (pipe(fd)) return;
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return;
  }
  if (pid == 0) {
    /* the program's environment, without the collector (this process
     * records nothing and must write no trace) */
    unsetenv("NVTX_INJECTION64_PATH");
    unsetenv("CUDA_INJECTION64_PATH");
    dup2(fd[1], 1);
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
      dup2(null, 0);
      dup2(null, 2);
    }
    close(fd[0]);
    char opt[16];
    snprintf(opt, sizeof opt, "-%s", flags);
    char *argv[] = {interp, opt, "-c", (char *)py_check_src, (char *)pydir, NULL};
    execvp(interp, flags[0] ? argv : (char *[]){interp, "-c", (char *)py_check_src, (char *)pydir, NULL});
    _exit(127);
  }
  close(fd[1]);
  static char out[65536], junk[4096];
  size_t got = 0;
  int timed_out = 0;
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    long left = 10000 - ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
    struct pollfd p = {fd[0], POLLIN, 0};
    int r = left > 0 ? poll(&p, 1, (int)left) : 0;
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) { /* 10 s and no answer: give up on the check, not the run */
      kill(pid, SIGKILL);
      timed_out = 1;
      break;
    }
    int full = got == sizeof out - 1; /* then drain: the child must not die of SIGPIPE */
    ssize_t k = full ? read(fd[0], junk, sizeof junk) : read(fd[0], out + got, sizeof out - 1 - got);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    if (!full) got += (size_t)k;
  }
  close(fd[0]);
  out[got] = 0;
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    say("warning: %s gave no answer in 10 s to whether it can import ncrt; running the program anyway", interp);
    return;
  }
  /* marked lines: a sitecustomize may print too */
  char *version = strstr(out, "\n@@ncrun-version "), *why = strstr(out, "\n@@ncrun-result ");
  if (!version) return; /* did not start (127), or no answer: the run itself will tell */
  version += strlen("\n@@ncrun-version ");
  if (why) why += strlen("\n@@ncrun-result ");
  else why = version + strlen(version); /* the import died: "" */
  version[strcspn(version, "\n")] = 0;
  why[strcspn(why, "\n")] = 0;
  if (!strcmp(why, "ok")) return;
  char sig[64];
  if (!*why && WIFSIGNALED(st)) {
    snprintf(sig, sizeof sig, "importing ncrt killed it (signal %d)", WTERMSIG(st));
    why = sig;
  } else if (!*why) {
    return;
  }
  say("warning: %s (%s) cannot import ncrt: %s. Its Python ranges will not be recorded; running it anyway",
      interp, version, why);
}

/* Processes that died (a signal, _exit, SIGKILL, the OOM killer), and those
 * whose exit handed a large conversion over (.ncrt-PID.hand), leave spill
 * files (.ncrt-PID.*) in the run directory: libncrt's finalizer makes
 * their traces. Returns the number written, -1 if it cannot run. */
static int finalize(const char *lib, const char *dir) {
  void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  int (*fn)(const char *, int) = h ? (int (*)(const char *, int))dlsym(h, "ncrt_finalize_dir") : NULL;
  if (!fn) {
    say("cannot finalize the traces in %s: %s", dir, dlerror());
    return -1;
  }
  return fn(dir, 0);
}


/* qsort hands pointers to the elements (char *), not the strings */
static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Says the traces in dir; with paths, also hands their full paths over
 * (the caller frees them and the array). Returns how many. */
static int list_files(const char *dir, const char *suffix, char ***paths) {
  DIR *d = opendir(dir);
  int n = 0;
  if (!d) return 0;
  struct dirent *e;
  char **names = NULL;
  while ((e = readdir(d))) {
    size_t l = strlen(e->d_name);
    size_t sl = strlen(suffix);
    if (l > sl && !strcmp(e->d_name + l - sl, suffix)) {
      names = xrealloc(names, (size_t)(n + 1) * sizeof *names);
      names[n++] = xstrdup(e->d_name);
    }
  }
  closedir(d);
  if (n) qsort(names, (size_t)n, sizeof *names, cmp_names);
  for (int i = 0; i < n; i++) {
    if (n <= 8 || i < 4 || i >= n - 2) say("trace: %s/%s", dir, names[i]);
    else if (i == 4) say("... %d more", n - 6);
    if (paths) {
      char *full = xmalloc(strlen(dir) + strlen(names[i]) + 2);
      sprintf(full, "%s/%s", dir, names[i]);
      free(names[i]);
      names[i] = full;
    } else {
      free(names[i]);
    }
  }
  if (paths) *paths = names;
  else free(names);
  return n;
}

static int list_traces(const char *dir, char ***paths) { return list_files(dir, NCRT_TRACE_SUFFIX, paths); }

/* nctrace, for the deep-dive stages: beside ncrun (installed bin/), in the
 * build tree's bin/ (ncrun lives in <build>/ncrt), else on PATH. */
static void find_nctrace(char *out, size_t n) {
  char exe[PATH_MAX];
  ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[k > 0 ? k : 0] = 0;
  char *dir = dirname(exe);
  const char *const rel[] = {"nctrace", "../bin/nctrace", NULL};
  for (int i = 0; rel[i]; i++) {
    snprintf(out, n, "%s/%s", dir, rel[i]);
    if (access(out, X_OK) == 0) return;
  }
  if (!ncrun_resolve_cmd("nctrace", out, n)) *out = 0;
}

/* <dir>/summary.md: `nctrace summary` of the run's traces (with the
 * profiler's CSV named by flag/csv when given). */
static void write_summary(const char *nctrace, const char *dir, cJSON *env, char **traces, int n, const char *flag,
                          const char *csv) {
  char md[PATH_MAX + 16];
  snprintf(md, sizeof md, "%s/summary.md", dir);
  char **argv = calloc((size_t)n + 6, sizeof *argv);
  if (!argv) return;
  int k = 0;
  argv[k++] = (char *)nctrace;
  argv[k++] = "summary";
  argv[k++] = "-q";
  if (flag) {
    argv[k++] = (char *)flag;
    argv[k++] = (char *)csv;
  }
  for (int t = 0; t < n; t++) argv[k++] = traces[t];
  if (ncrun_stage(env, "summary", argv, md) == 0) say("summary: %s", md);
  else say("nctrace summary failed: %s is incomplete", md);
  free(argv);
}

/* ---- option values, checked before the program starts (a typo must not
 * cost a run): each returns NULL or the reason, for "ncrun: OPT: reason" */
static char why[512];

static const char *check_schedule(const char *v) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", v);
  long val[4] = {0, 0, 0, 1};
  static const char *const keys[] = {"wait", "warmup", "active", "repeat"};
  int positional = !strchr(v, '='), k = 0;
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), k++) {
    char *num = tok;
    int slot = k;
    if (!positional) {
      char *eq = strchr(tok, '=');
      if (!eq) {
        snprintf(why, sizeof why, "'%s' is not KEY=N (keys: wait, warmup, active, repeat)", tok);
        return why;
      }
      *eq = 0;
      num = eq + 1;
      for (slot = 0; slot < 4 && strcmp(tok, keys[slot]); slot++) {
      }
      if (slot == 4) {
        const char *near = nearest_word(tok, keys, 4);
        snprintf(why, sizeof why, "unknown key '%s'%s%s%s (keys: wait, warmup, active, repeat)", tok,
                 near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
        return why;
      }
    } else if (k > 3) {
      snprintf(why, sizeof why, "at most four numbers: W,U,A[,R]");
      return why;
    }
    char *end;
    long n = strtol(num, &end, 10);
    if (!*num || *end || n < 0) {
      snprintf(why, sizeof why, "%s=%s is not a whole number >= 0", keys[slot], num);
      return why;
    }
    val[slot] = n;
  }
  if (positional && k < 3) {
    snprintf(why, sizeof why, "wants wait=W,warmup=U,active=A[,repeat=R] or W,U,A[,R]");
    return why;
  }
  if (val[2] < 1) {
    snprintf(why, sizeof why, "active must be at least 1 (steps recorded per cycle)");
    return why;
  }
  return NULL;
}

static const char *check_activities(const char *v) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", v);
  int any = 0;
  for (char *save = NULL, *tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
    static const char *const acts[] = {"cpu", "gpu", "mem"};
    if (strcmp(tok, "cpu") && strcmp(tok, "gpu") && strcmp(tok, "mem")) {
      const char *near = nearest_word(tok, acts, 3);
      snprintf(why, sizeof why, "unknown activity '%s'%s%s%s (cpu, gpu, mem)", tok, near ? " (did you mean '" : "",
               near ? near : "", near ? "'?)" : "");
      return why;
    }
    any = 1;
  }
  return any ? NULL : "empty (cpu, gpu, mem)";
}

static const char *check_throttle(const char *v) {
  if (!strcmp(v, "off") || !strcmp(v, "0")) return NULL;
  char *end;
  long n = strtol(v, &end, 10);
  if (end != v && n > 0 && (!*end || (*end == ':' && end[1] && strtod(end + 1, &end) >= 0 && !*end)))
    return NULL;
  return "wants CALLS or CALLS:US (e.g. 100000 or 100000:10) or off";
}

static const char *check_budget(const char *v) {
  int ok;
  ncrt_parse_size(v, &ok);
  return ok ? NULL : "wants a size (512M, 2G, 1.5T: bytes of records the run may spill) or off";
}

static const char *check_level(const char *v) {
  char *end;
  long n = strtol(v, &end, 10);
  return *v && !*end && n >= 0 && n <= 9 ? NULL : "wants a zlib level from 0 to 9";
}

int main(int argc, char **argv) {
  const char *output = getenv(NCRT_ENV_OUTPUT_ROOT), *run_dir = NULL, *name = NULL, *rules = NULL, *shadow = NULL;
  const char *backend = "ncrt", *reuse = NULL;
  int summary = -1; /* default: for --ncu/--nsys runs only */
  Deep deep = {.top = 5, .launch_count = 5};
  cJSON *opts = cJSON_CreateObject();
  int i;
  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(s, l) (!strcmp(a, s) || !strcmp(a, l))
#define NEEDV()                                     \
  do {                                              \
    if (!v) {                                       \
      fprintf(stderr, "ncrun: %s needs a value\n%s", a, usage); \
      cJSON_Delete(opts);                           \
      return 2;                                     \
    }                                               \
    cJSON_AddStringToObject(opts, a + (a[1] == '-' ? 2 : 1), v); \
    i++;                                            \
  } while (0)
#define CHECKV(fn)                                  \
  do {                                              \
    const char *bad_ = fn(v);                       \
    if (bad_) {                                     \
      fprintf(stderr, "ncrun: %s %s: %s\n", a, v, bad_); \
      cJSON_Delete(opts);                           \
      return 2;                                     \
    }                                               \
  } while (0)
    if (!strcmp(a, "--")) {
      i++;
      break;
    } else if (OPT("-h", "--help")) {
      fputs(usage, stdout);
      cJSON_Delete(opts);
      return 0;
    } else if (OPT("-V", "--version")) {
      printf("ncrun %s\n", NC_VERSION);
      cJSON_Delete(opts);
      return 0;
    } else if (OPT("-o", "--output")) {
      NEEDV();
      output = v;
    } else if (OPT("--", "--run-dir")) {
      NEEDV();
      run_dir = v;
    } else if (OPT("-n", "--name")) {
      NEEDV();
      name = v;
    } else if (OPT("-a", "--activities")) {
      NEEDV();
      CHECKV(check_activities);
      setenv(NCRT_ENV_ACTIVITIES, v, 1);
    } else if (OPT("--", "--schedule")) {
      NEEDV();
      CHECKV(check_schedule);
      if (!strchr(v, '=')) {
        long w = 0, u = 0, ac = 0, r = 1;
        int k = sscanf(v, "%ld,%ld,%ld,%ld", &w, &u, &ac, &r);
        if (k < 3) {
          fprintf(stderr, "ncrun: --schedule wants wait=W,warmup=U,active=A[,repeat=R] or W,U,A[,R]\n");
          cJSON_Delete(opts);
          return 2;
        }
        char buf[128];
        snprintf(buf, sizeof buf, "wait=%ld,warmup=%ld,active=%ld,repeat=%ld", w, u, ac, r);
        setenv(NCRT_ENV_SCHEDULE, buf, 1);
      } else {
        setenv(NCRT_ENV_SCHEDULE, v, 1);
      }
    } else if (OPT("--", "--step")) {
      NEEDV();
      setenv(NCRT_ENV_STEP, v, 1);
    } else if (OPT("--", "--capture-range")) {
      NEEDV();
      setenv(NCRT_ENV_CAPTURE_RANGE, v, 1);
    } else if (OPT("--", "--throttle")) {
      NEEDV();
      CHECKV(check_throttle);
      setenv(NCRT_ENV_THROTTLE, v, 1);
    } else if (OPT("--", "--disk-budget")) {
      NEEDV();
      CHECKV(check_budget);
      setenv(NCRT_ENV_DISK_BUDGET, v, 1);
    } else if (OPT("--", "--gzip-level")) {
      NEEDV();
      CHECKV(check_level);
      setenv(NCRT_ENV_GZIP_LEVEL, v, 1);
    } else if (OPT("--", "--rules")) {
      NEEDV();
      if (access(v, R_OK) != 0) {
        fprintf(stderr, "ncrun: --rules %s: %s\n", v, strerror(errno));
        cJSON_Delete(opts);
        return 2;
      }
      rules = v;
    } else if (OPT("--", "--shadow")) {
      NEEDV();
      struct stat sd;
      if (stat(v, &sd) != 0 || !S_ISDIR(sd.st_mode)) {
        fprintf(stderr, "ncrun: --shadow %s: %s\n", v, stat(v, &sd) != 0 ? strerror(errno) : "not a directory");
        cJSON_Delete(opts);
        return 2;
      }
      shadow = v;
    } else if (OPT("--", "--torch")) {
      cJSON_AddTrueToObject(opts, "torch");
      setenv(NCRT_ENV_TORCH, "1", 1);
    } else if (OPT("--", "--backend")) {
      NEEDV();
      if (strcmp(v, "ncrt") && strcmp(v, "torch") && strcmp(v, "ncu") && strcmp(v, "nsys")) {
        fprintf(stderr, "ncrun: --backend %s: not one of ncrt, torch, ncu, nsys\n", v);
        cJSON_Delete(opts);
        return 2;
      }
      backend = v;
    } else if (OPT("--", "--ncu") || OPT("--", "--nsys")) {
      NEEDV();
      backend = a + 2;
      deep.pattern = v;
    } else if (OPT("--", "--top") || OPT("--", "--launch-count")) {
      NEEDV();
      char *end;
      long n = strtol(v, &end, 10);
      if (*end || n < 0 || n > 100000 || (n == 0 && a[2] == 'l')) {
        fprintf(stderr, "ncrun: %s %s: wants a number%s\n", a, v, a[2] == 'l' ? " >= 1" : " >= 0");
        cJSON_Delete(opts);
        return 2;
      }
      *(a[2] == 't' ? &deep.top : &deep.launch_count) = (int)n;
    } else if (OPT("--", "--set")) {
      NEEDV();
      deep.set = v;
    } else if (OPT("--", "--trace")) {
      NEEDV();
      if (access(v, R_OK) != 0) {
        fprintf(stderr, "ncrun: --trace %s: %s\n", v, strerror(errno));
        cJSON_Delete(opts);
        return 2;
      }
      reuse = v;
    } else if (OPT("--", "--with-stack")) {
      cJSON_AddTrueToObject(opts, "with-stack");
      setenv(NCRT_ENV_WITH_STACK, "1", 1);
    } else if (OPT("--", "--record-shapes")) {
      cJSON_AddTrueToObject(opts, "record-shapes");
      setenv(NCRT_ENV_RECORD_SHAPES, "1", 1);
    } else if (OPT("--", "--no-summary") || OPT("--", "--summary")) {
      summary = a[2] == 's';
    } else if (OPT("--", "--no-preload")) {
      cJSON_AddTrueToObject(opts, "no-preload");
      preload = 0;
    } else if (OPT("-q", "--quiet")) {
      ncrun_quiet = 1;
    } else if (OPT("--", "--finalize")) {
      /* by hand: the traces of the processes that died in a run directory */
      NEEDV();
      char lib[PATH_MAX], pydir[PATH_MAX];
      find_runtime(lib, pydir, sizeof lib);
      cJSON_Delete(opts);
      if (finalize(lib, v) < 0) return 2;
      if (!list_traces(v, NULL)) say("no trace in %s", v);
      return 0;
    } else if (a[0] == '-') {
      fprintf(stderr, "ncrun: unknown option %s\n%s", a, usage);
      cJSON_Delete(opts);
      return 2;
    } else {
      break; /* the command starts here (no "--") */
    }
  }
  if (i >= argc) {
    fprintf(stderr, "ncrun: no command given\n%s", usage);
    cJSON_Delete(opts);
    return 2;
  }
  char **cmd = argv + i;
  int is_deep = !strcmp(backend, "ncu") || !strcmp(backend, "nsys");
  if (summary < 0) summary = is_deep;
  if (is_deep && !deep.pattern) {
    fprintf(stderr, "ncrun: --backend %s needs the range to profile: use --%s GLOB\n", backend, backend);
    cJSON_Delete(opts);
    return 2;
  }
  deep.backend = backend;
  /* One tool per CUPTI/NVTX slot: a profiler above us holds it already */
  if (strcmp(backend, "ncrt")) {
    static const char *const held[] = {"NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH"};
    for (int k = 0; k < 2; k++) {
      const char *cur = getenv(held[k]);
      if (cur && *cur) {
        fprintf(stderr, "ncrun: --backend %s: another profiler holds the %s slot (%s=%s); run it outside that "
                        "profiler\n", backend, k ? "CUDA (CUPTI)" : "NVTX", held[k], cur);
        cJSON_Delete(opts);
        return 2;
      }
    }
  }
  char nctrace[PATH_MAX] = "";
  if (is_deep) {
    deep.tool = deep_find_tool(backend);
    if (!deep.tool) {
      fprintf(stderr, "ncrun: --%s: %s is not installed here (looked on PATH and in /usr/local/cuda/bin; set "
                      "NCRT_%s to its path): nothing run\n", backend, backend, strcmp(backend, "ncu") ? "NSYS" : "NCU");
      cJSON_Delete(opts);
      return 2;
    }
    find_nctrace(nctrace, sizeof nctrace);
    if (!*nctrace) {
      fprintf(stderr, "ncrun: --%s: nctrace not found beside ncrun or on PATH (it chooses the kernels)\n", backend);
      cJSON_Delete(opts);
      return 2;
    }
    deep.nctrace = nctrace;
    cJSON_AddStringToObject(opts, backend, deep.pattern);
  }

  /* torch's version for env.json (torch and deep backends of a Python
   * command), asked before any of our environment is set: the torch hook
   * must not start in this probe */
  char *torch_version = NULL;
  if (strcmp(backend, "ncrt") && python_name(cmd[0])) {
    char tmp[] = "/tmp/ncrun-torch-XXXXXX";
    int fd = mkstemp(tmp);
    if (fd >= 0) {
      close(fd);
      char *const probe[] = {cmd[0], "-c",
                             "import importlib.util as u\nif u.find_spec('torch'):\n"
                             "  import torch; print('ncrun-torch', torch.__version__, torch.version.cuda or 'cpu')",
                             NULL};
      if (ncrun_stage(NULL, NULL, probe, tmp) == 0) {
        /* the marked line: a sitecustomize may print too */
        char *t = ncrun_read_file(tmp, NULL), *m = t ? strstr(t, "ncrun-torch ") : NULL;
        if (m) {
          m += strlen("ncrun-torch ");
          m[strcspn(m, "\n")] = 0;
          torch_version = xstrdup(m);
        }
        free(t);
      }
      unlink(tmp);
    }
  }
  char lib[PATH_MAX], pydir[PATH_MAX];
  find_runtime(lib, pydir, sizeof lib);
  if (!exists(lib)) say("libncrt.so not found beside ncrun (%s): running without the collector", lib);

  char nm[256];
  if (name) snprintf(nm, sizeof nm, "%s", name);
  else default_name(cmd, nm, sizeof nm);

  char dir[PATH_MAX];
  if (run_dir) {
    snprintf(dir, sizeof dir, "%s", run_dir);
  } else {
    if (!output || !*output) output = "ncrt-runs";
    time_t now = time(NULL);
    char ts[32];
    strftime(ts, sizeof ts, "%Y%m%d-%H%M%S", localtime(&now));
    snprintf(dir, sizeof dir, "%s/%s-%s", output, nm, ts);
    for (int k = 2; exists(dir) && k < 1000; k++) snprintf(dir, sizeof dir, "%s/%s-%s-%d", output, nm, ts, k);
  }
  int dir_made = !exists(dir);
  if (mkdirs(dir)) {
    fprintf(stderr, "ncrun: cannot create %s: %s\n", dir, strerror(errno));
    cJSON_Delete(opts);
    return 2;
  }
  char real[PATH_MAX];
  if (realpath(dir, real)) snprintf(dir, sizeof dir, "%s", real);

  const char *cupti = find_cupti();
  setenv(NCRT_ENV_OUTPUT_DIR, dir, 1);
  setenv(NCRT_ENV_TRACE_NAME, nm, 1);
  /* Under nsys/ncu their own injection is already set: keep it (one tool per
   * slot), say so, and record what is left to us. */
  static const char *const slots[] = {"NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH"};
  int torch = !strcmp(backend, "torch");
  for (int k = 0; k < 2 && exists(lib) && !torch; k++) { /* torch: Kineto holds CUPTI */
    const char *cur = getenv(slots[k]);
    if (cur && *cur && strcmp(cur, lib) != 0) {
      say("%s is already set (%s), probably by another profiler: kept, so ncrt records no %s", slots[k], cur,
          k == 0 ? "NVTX ranges" : "GPU activity");
      continue;
    }
    setenv(slots[k], lib, 1);
  }
  if (cupti && !getenv(NCRT_ENV_CUPTI_LIB)) setenv(NCRT_ENV_CUPTI_LIB, cupti, 1);
  /* ncrun finalizes the run's processes when its command ends: an exit with
   * much left to convert hands it over and ends at once (libncrt's writer,
   * "the fast exit"); torch's backend writes its own traces */
  if (!torch) setenv(NCRT_ENV_FINALIZER, "ncrun", 1);
  else unsetenv(NCRT_ENV_FINALIZER);
  prepend("PYTHONPATH", pydir);
  if (shadow) {
    char s[PATH_MAX];
    prepend("PYTHONPATH", realpath(shadow, s) ? s : shadow);
  }
  if (torch) {
    /* the startup hook (sitecustomize) that starts torch.profiler; ncrt.range
     * opens record_function, so our ranges are user_annotation events. First on
     * the path, ahead of the shadow tree: its own sitecustomize (which the
     * hook runs after itself) must not hide ours */
    char hook[PATH_MAX + 16];
    snprintf(hook, sizeof hook, "%s/torch_backend", pydir);
    prepend("PYTHONPATH", hook);
    setenv(NCRT_ENV_BACKEND, "torch", 1);
    setenv(NCRT_ENV_TORCH, "1", 1);
    preload = 0;
  }
  cJSON *env = env_json(cmd, opts, lib, cupti, shadow, backend); /* takes opts */
  opts = NULL;
  add_rules_info(env, rules);
  if (torch_version) { /* "2.11.0+cu130 13.0": torch and the CUDA it was built for */
    cJSON_AddStringToObject(cJSON_GetObjectItem(env, "tools"), "torch", torch_version);
    free(torch_version);
  }
  if (is_deep) {
    char *ver = deep_tool_version(deep.tool);
    cJSON_AddStringToObject(cJSON_GetObjectItem(env, "tools"), backend, ver ? ver : "unknown");
    free(ver);
    if (reuse) {
      char rp[PATH_MAX];
      cJSON_AddStringToObject(env, "stage1_trace", realpath(reuse, rp) ? rp : reuse);
    }
  }
  ncrun_save_env(dir, env);
  if (rules) copy_file(rules, dir);

  /* LD_PRELOAD splits on blanks and ':': such a path cannot be preloaded */
  if (preload && exists(lib) && strpbrk(lib, " \t:")) {
    say("not preloading %s (LD_PRELOAD cannot name a path with a blank or ':'): a program that leaves by "
        "_exit writes no trace", lib);
    preload = 0;
  }
  if (!ncrun_quiet) check_python(cmd, pydir);
  if (!ncrun_quiet && shadow) check_shadow(cmd, shadow);
  /* installed before the fork and blocked across it (ncrun_forward_block):
   * a signal that comes meanwhile is passed on once the child is set */
  ncrun_forward_signals();
  int st = 0, ntraces = 0;
  char **traces = NULL;
  if (reuse) goto stage2;
  pid_t self_pid = getpid();
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  fflush(NULL);
  int exec_pipe[2] = {-1, -1}; /* the child's exec errno, if exec fails (closed by a good exec) */
  if (pipe2(exec_pipe, O_CLOEXEC) != 0) exec_pipe[0] = exec_pipe[1] = -1;
  sigset_t unblocked;
  ncrun_forward_block(&unblocked);
  /* test hook: a SIGTERM between the handler and the fork */
  if (getenv("NCRUN_TEST_TERM_AT_FORK")) raise(SIGTERM);
  pid_t forked = fork();
  if (forked < 0) {
    sigprocmask(SIG_SETMASK, &unblocked, NULL);
    fprintf(stderr, "ncrun: fork: %s\n", strerror(errno));
    cJSON_Delete(env);
    return 2;
  }
  if (forked == 0) {
    ncrun_forward_child(&unblocked);
    /* the command dies with ncrun: killed (SIGKILL, the OOM killer) ncrun
     * cannot pass anything on, and an orphan would run on unwatched; if
     * ncrun died before this line, its death was missed: go now */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != self_pid) _exit(128 + SIGKILL);
    char pid[32];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    setenv(NCRT_ENV_ROOT_PID, pid, 1);
    /* Preloaded, libncrt's _exit/_Exit run first and write the trace (the
     * NVTX and CUDA injections then dlopen the same, already loaded, copy). */
    if (preload && exists(lib)) prepend("LD_PRELOAD", lib);
    execvp(cmd[0], cmd);
    int e = errno;
    fprintf(stderr, "ncrun: cannot run %s: %s\n", cmd[0], strerror(e));
    if (exec_pipe[1] >= 0 && write(exec_pipe[1], &e, sizeof e) < 0) {
    }
    _exit(127);
  }
  ncrun_set_child(forked);
  sigprocmask(SIG_SETMASK, &unblocked, NULL);
  if (exec_pipe[1] >= 0) close(exec_pipe[1]);
  int exec_err = 0;
  while (waitpid(forked, &st, 0) < 0 && errno == EINTR) {
  }
  ncrun_set_child(0);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (exec_pipe[0] >= 0) {
    if (read(exec_pipe[0], &exec_err, sizeof exec_err) != (ssize_t)sizeof exec_err) exec_err = 0;
    close(exec_pipe[0]);
  }
  if (exec_err) {
    /* nothing ran: leave no run directory behind (one made for this run) */
    if (dir_made) {
      char p[PATH_MAX + 32];
      snprintf(p, sizeof p, "%s/env.json", dir);
      unlink(p);
      if (rules) {
        char *r = xstrdup(rules);
        snprintf(p, sizeof p, "%s/%s", dir, basename(r));
        unlink(p);
        free(r);
      }
      rmdir(dir);
    }
    cJSON_Delete(env);
    return 127;
  }
  int rc = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
  ncrun_record_stage(env, is_deep ? "stage1" : backend, cmd, NULL, rc, &t0, &t1);
  ncrun_save_env(dir, env);
  if (exists(lib) && !torch) finalize(lib, dir);
  {
    /* the run's disk-budget counter (libncrt's writer) has done its job */
    char *b = xasprintf("%s/.ncrt-budget", dir);
    unlink(b);
    free(b);
  }
  if (torch) {
    /* torch.profiler's tensorboard_trace_handler names (what TensorBoard lists) */
    ntraces = list_files(dir, ".pt.trace.json.gz", &traces);
    if (!ntraces) say("no torch.profiler trace (*.pt.trace.json.gz) was written in %s", dir);
    else say("run directory: %s", dir);
  } else if (!(ntraces = list_traces(dir, &traces))) {
    say("no trace was written in %s", dir);
  } else {
    say("run directory: %s", dir);
  }
  if (!is_deep) {
    if (summary && ntraces) {
      find_nctrace(nctrace, sizeof nctrace);
      if (*nctrace) write_summary(nctrace, dir, env, traces, ntraces, NULL, NULL);
    }
    for (int t = 0; t < ntraces; t++) free(traces[t]);
    free(traces);
    ncrun_save_env(dir, env);
    cJSON_Delete(env);
    return rc;
  }
  if (rc != 0) {
    say("stage 1 ended with status %d: stage 2 (%s) not run", rc, backend);
    cJSON_Delete(env);
    return rc;
  }
stage2:;
  /* stage 2 runs under the profiler alone: our injection is taken back */
  static const char *const ours[] = {"NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH"};
  for (int k = 0; k < 2; k++) {
    const char *cur = getenv(ours[k]);
    if (cur && !strcmp(cur, lib)) unsetenv(ours[k]);
  }
  if (reuse) {
    traces = xmalloc(sizeof *traces);
    ntraces = 1;
    traces[0] = xstrdup(reuse);
  }
  int drc = deep_run(&deep, dir, traces, ntraces, cmd, env);
  if (ntraces && summary) {
    const char *kind = NULL;
    char csv[2 * PATH_MAX];
    snprintf(csv, sizeof csv, "%s/%s/%s", dir, backend, !strcmp(backend, "ncu") ? "raw.csv" : "stats_cuda_gpu_kern_sum.csv");
    /* a reused trace lies elsewhere: name the CSV (nctrace looks beside the trace) */
    if (reuse && exists(csv)) kind = !strcmp(backend, "ncu") ? "--ncu" : "--nsys";
    write_summary(deep.nctrace, dir, env, traces, ntraces, kind, kind ? csv : NULL);
  }
  for (int t = 0; t < ntraces; t++) free(traces[t]);
  free(traces);
  ncrun_save_env(dir, env);
  cJSON_Delete(env);
  return drc;
}
