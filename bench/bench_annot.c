/* Annotation load benchmark: a synthetic MuCo-3DHP file of ~N persons (JSON
 * only), loaded by rn_dataset_load cold (parse + cache write), from the cache,
 * and without the cache; the source hash on its own; next to Python json.load
 * plus the authors' MuCo filter (bench/annot_ref.py, PY or /usr/bin/python3).
 *
 *   build/bench/bench_annot [--persons 100000] [--dir DIR] [--no-python]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "data/sets/cache.h"
#include "data/sets/sample.h"
#include "data/synth/synth.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double peak_rss_mb(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_maxrss / 1024.0;
}

static double time_load(const char *dir, const rn_dataset_opts *o, size_t *n, char *note, size_t note_len)
{
    rn_dataset ds;
    rn_err err = {{0}};
    double t0 = now();
    if (rn_dataset_load(&ds, "MuCo", dir, RN_SPLIT_TRAIN, o, &err)) {
        fprintf(stderr, "bench_annot: %s\n", err.msg);
        exit(1);
    }
    /* touch every record so a mapped cache is really read */
    double sum = 0;
    for (size_t i = 0; i < ds.n; i++) sum += ds.samples[i].k;
    double t = now() - t0;
    *n = ds.n;
    snprintf(note, note_len, "%.60s", ds.cache_note);
    rn_dataset_free(&ds);
    return sum < 0 ? -t : t;
}

static double time_hash(const char *path, size_t *bytes)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) return -1;
    double t0 = now();
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    close(fd);
    volatile uint64_t h = rn_hash64(p, (size_t)st.st_size, 2);
    double t = now() - t0;
    (void)h;
    munmap(p, (size_t)st.st_size);
    *bytes = (size_t)st.st_size;
    return t;
}

static int run_python(const char *json, double *load_s, double *filter_s, long *records, double *rss)
{
    const char *py = getenv("PY") ? getenv("PY") : "/usr/bin/python3";
    char cmd[4600], line[512] = "";
    snprintf(cmd, sizeof cmd, "'%s' bench/annot_ref.py '%s'", py, json);
    FILE *f = popen(cmd, "r");
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "json_load_s=%lf filter_s=%lf records=%ld peak_rss_mb=%lf", load_s, filter_s, records,
                   rss) == 4) {
            pclose(f);
            return 0;
        }
    pclose(f);
    return -1;
}

int main(int argc, char **argv)
{
    long persons = 100000;
    const char *dir = NULL;
    int python = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--persons") && i + 1 < argc) persons = strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc) dir = argv[++i];
        else if (!strcmp(argv[i], "--no-python")) python = 0;
        else {
            fprintf(stderr, "usage: bench_annot [--persons N] [--dir DIR] [--no-python]\n");
            return 2;
        }
    }
    char tmpl[] = "/tmp/rn_bench_annot_XXXXXX";
    if (!dir && !(dir = mkdtemp(tmpl))) return perror("mkdtemp"), 1;
    rn_synth_opts so = {.format = RN_SYNTH_MUCO, .images = persons / 2, .seed = 1, .no_images = 1};
    rn_err err = {{0}};
    double t0 = now();
    if (rn_synth_write(dir, &so, &err)) return fprintf(stderr, "bench_annot: %s\n", err.msg), 1;
    char json[4200], cpath[4600], note[64];
    snprintf(json, sizeof json, "%s/MuCo/data/MuCo-3DHP.json", dir);
    rn_dataset_opts o = {.protocol = 2, .input_w = 256, .input_h = 256};
    rn_dataset_cache_path(cpath, sizeof cpath, "MuCo", dir, RN_SPLIT_TRAIN, &o);
    unlink(cpath);
    size_t bytes = 0, n = 0;
    printf("generated %ld images (~%ld persons) in %.2f s\n", so.images, persons, now() - t0);
    double th = time_hash(json, &bytes);
    printf("source: %.1f MB; content hash incl. mmap %.4f s (%.2f GB/s)\n", bytes / 1e6, th, bytes / th / 1e9);
    double rss0 = peak_rss_mb();
    double t_first = time_load(dir, &o, &n, note, sizeof note);
    double rss1 = peak_rss_mb();
    printf("first load (parse + cache write): %.4f s, %zu records, peak RSS +%.0f MB  [%s]\n", t_first, n,
           rss1 - rss0, note);
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
        double t = time_load(dir, &o, &n, note, sizeof note);
        best = t < best ? t : best;
    }
    printf("cached load (validate incl. source hash + mmap), best of 5: %.4f s  [%s]\n", best, note);
    rn_dataset_opts nc = o;
    nc.no_cache = 1;
    double t_parse = time_load(dir, &nc, &n, note, sizeof note);
    printf("parse only (no cache): %.4f s\n", t_parse);
    printf("ratios: first/cached %.1fx\n", t_first / best);
    double pl, pf, prss;
    long pn;
    if (python && run_python(json, &pl, &pf, &pn, &prss) == 0) {
        printf("python json.load %.3f s + authors' filter %.3f s = %.3f s, %ld records, peak RSS %.0f MB\n", pl, pf,
               pl + pf, pn, prss);
        printf("ratios: python/first %.1fx, python/cached %.0fx, python json.load/parse-only %.1fx\n",
               (pl + pf) / t_first, (pl + pf) / best, pl / t_parse);
        if ((size_t)pn != n) printf("WARNING: record count differs (python %ld, rootnet %zu)\n", pn, n);
    }
    if (dir == tmpl) {
        char cmd[4300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd)) return 1;
    }
    return 0;
}
