/* The binary annotation cache: miss then hit with identical records; touch,
 * same-size edits, corrupt/truncated/foreign caches and option changes all
 * reparse (never crash); no_cache and cache_dir. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "data/sets/cache.h"
#include "data/sets/sample.h"
#include "data/synth/synth.h"

static char g_dir[256], g_src[512], g_cache[600];

static int load(rn_dataset *ds, const rn_dataset_opts *o)
{
    rn_err err = {{0}};
    int rc = rn_dataset_load(ds, "MuCo", g_dir, RN_SPLIT_TRAIN, o, &err);
    RN_CHECK(rc == 0, "load: %s", err.msg);
    return rc;
}

/* Loads and checks the cache outcome (prefix of cache_note) and the records. */
static void expect(const rn_dataset_opts *o, const char *note, const rn_dataset *ref, const char *what)
{
    rn_dataset ds;
    if (load(&ds, o)) return;
    RN_CHECK(strncmp(ds.cache_note, note, strlen(note)) == 0, "%s: note '%s', want '%s'", what, ds.cache_note, note);
    RN_CHECK((ds.mapping != NULL) == (strncmp(note, "hit", 3) == 0), "%s: mapping", what);
    if (ref) {
        RN_CHECK(ds.n == ref->n && memcmp(ds.samples, ref->samples, ds.n * sizeof *ds.samples) == 0, "%s: records",
                 what);
        RN_CHECK(ds.strings_len == ref->strings_len && memcmp(ds.strings, ref->strings, ds.strings_len) == 0,
                 "%s: strings", what);
        RN_CHECK(ds.J == 21 && ref->J == 21 && !strcmp(ds.skeleton, "MuCo") && !strcmp(ref->skeleton, "MuCo") &&
                     memcmp(ds.joints, ref->joints, ds.n * 21 * RN_JOINT_F * sizeof(float)) == 0,
                 "%s: joints (J %d '%s')", what, ds.J, ds.skeleton);
    }
    rn_dataset_free(&ds);
}

/* A cache of format 2 (before the joints) at g_cache: reparsed, said once on warn. */
static void test_old_format(const rn_dataset_opts *base, const rn_dataset *ref)
{
    uint32_t v2 = 2;
    int fd = open(g_cache, O_RDWR);
    RN_CHECK(fd >= 0 && pwrite(fd, &v2, sizeof v2, 8) == (ssize_t)sizeof v2, "version 2 written");
    if (fd >= 0) close(fd);
    char warn_path[400], line[1024] = "";
    snprintf(warn_path, sizeof warn_path, "%s/warn_old.txt", g_dir);
    rn_dataset_opts o = *base;
    o.warn = fopen(warn_path, "w");
    RN_CHECK(o.warn != NULL, "open %s", warn_path);
    expect(&o, "miss (written by an older rootnet), wrote", ref, "old cache format");
    expect(&o, "hit", ref, "old cache rebuilt");
    fclose(o.warn);
    FILE *f = fopen(warn_path, "r");
    int lines = 0;
    while (f && fgets(line, sizeof line, f)) lines++;
    if (f) fclose(f);
    RN_CHECK(lines == 1 && strstr(line, "written by an older rootnet") && strstr(line, "rebuilding"),
             "one line for an old cache, got %d: '%s'", lines, line);
}

static void set_mtime(const char *path, time_t sec, long nsec)
{
    struct timespec ts[2] = {{sec, nsec}, {sec, nsec}};
    RN_CHECK(utimensat(AT_FDCWD, path, ts, 0) == 0, "utimensat");
}

static void patch_byte(const char *path, long off_from_end, int xor_with)
{
    int fd = open(path, O_RDWR);
    RN_CHECK(fd >= 0, "open %s", path);
    if (fd < 0) return;
    off_t at = lseek(fd, -off_from_end, SEEK_END);
    unsigned char c;
    RN_CHECK(pread(fd, &c, 1, at) == 1, "pread");
    c ^= (unsigned char)xor_with;
    RN_CHECK(pwrite(fd, &c, 1, at) == 1, "pwrite");
    close(fd);
}

/* Rewrites every "width": 512 as 612 (same size) and restores the mtime:
 * only the content hash can tell. */
static void same_size_edit(void)
{
    struct stat st;
    RN_CHECK(stat(g_src, &st) == 0, "stat");
    FILE *f = fopen(g_src, "r+");
    char *buf = malloc((size_t)st.st_size + 1);
    size_t n = fread(buf, 1, (size_t)st.st_size, f);
    buf[n] = 0;
    int edits = 0;
    for (char *p = buf; (p = strstr(p, "\"width\": 512")); p++, edits++) p[9] = '6';
    RN_CHECK(edits > 0, "widths in source");
    fseek(f, 0, SEEK_SET);
    fwrite(buf, 1, n, f);
    fclose(f);
    free(buf);
    set_mtime(g_src, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

/* The data folder's cache cannot be written (here: a non-empty directory sits
 * where the cache file goes, which fails for root too): the cache goes to
 * $XDG_CACHE_HOME/rootnet/<hash>/ with one line on warn, and is read from there. */
static void test_user_fallback(const rn_dataset_opts *base)
{
    char xdg[300], cmd[1400];
    rn_dataset_opts o = *base;
    o.input_w = o.input_h = 320; /* a cache file of its own */
    char path[700];
    rn_dataset_cache_path(path, sizeof path, "MuCo", g_dir, RN_SPLIT_TRAIN, &o);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/x'", path);
    RN_CHECK(system(cmd) == 0, "block %s", path);
    snprintf(xdg, sizeof xdg, "%s/xdg", g_dir);
    setenv("XDG_CACHE_HOME", xdg, 1);
    char warn_path[400], line[1024] = "";
    snprintf(warn_path, sizeof warn_path, "%s/warn.txt", g_dir);
    o.warn = fopen(warn_path, "w");
    RN_CHECK(o.warn != NULL, "open %s", warn_path);
    char want[400];
    snprintf(want, sizeof want, "), wrote %s/rootnet/", xdg);
    rn_dataset ds;
    if (!load(&ds, &o)) {
        RN_CHECK(strstr(ds.cache_note, want) != NULL, "unwritable data folder: note '%s', want '%s'", ds.cache_note, want);
        rn_dataset_free(&ds);
    }
    fclose(o.warn);
    FILE *f = fopen(warn_path, "r");
    int lines = 0;
    while (f && fgets(line, sizeof line, f)) lines++;
    if (f) fclose(f);
    RN_CHECK(lines == 1, "one warning line, got %d", lines);
    snprintf(want, sizeof want, "%s/rootnet/", xdg);
    RN_CHECK(strstr(line, "cannot be written next to the annotations") && strstr(line, want), "warning: '%s'", line);
    o.warn = NULL;
    snprintf(want, sizeof want, "hit %s/rootnet/", xdg);
    expect(&o, want, NULL, "per-user cache read back");
    unsetenv("XDG_CACHE_HOME");
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/rn_cache_XXXXXX", tmp ? tmp : "/tmp");
    RN_CHECK(mkdtemp(g_dir) != NULL, "mkdtemp");
    rn_synth_opts so = {.format = RN_SYNTH_MUCO, .images = 40, .seed = 11, .no_images = 1};
    rn_err err = {{0}};
    RN_CHECK(rn_synth_write(g_dir, &so, &err) == 0, "synth: %s", err.msg);
    snprintf(g_src, sizeof g_src, "%s/MuCo/data/MuCo-3DHP.json", g_dir);
    rn_dataset_opts o = {.protocol = 2, .input_w = 256, .input_h = 256};
    rn_dataset_cache_path(g_cache, sizeof g_cache, "MuCo", g_dir, RN_SPLIT_TRAIN, &o);

    rn_dataset ref;
    rn_dataset_opts nc = o;
    nc.no_cache = 1;
    if (load(&ref, &nc)) RN_CHECK_DONE();
    RN_CHECK(strcmp(ref.cache_note, "cache disabled") == 0 && access(g_cache, F_OK) != 0, "no_cache writes nothing");
    RN_CHECK(ref.n > 20, "records %zu", ref.n);

    expect(&o, "miss (no cache), wrote", &ref, "first load");
    expect(&o, "hit", &ref, "second load");
    set_mtime(g_src, time(NULL) + 5, 0);
    expect(&o, "miss (options or source files changed)", &ref, "touched source");
    expect(&o, "hit", &ref, "after touch");

    patch_byte(g_cache, 3, 0x5a);
    expect(&o, "miss (payload hash mismatch)", &ref, "corrupt payload");
    patch_byte(g_cache, 1, 0xff);
    expect(&o, "miss (payload hash mismatch)", &ref, "corrupt joint (the file's last bytes)");
    RN_CHECK(truncate(g_cache, 10) == 0, "truncate");
    expect(&o, "miss (shorter than its header)", &ref, "truncated cache");
    FILE *f = fopen(g_cache, "w");
    for (int i = 0; i < 5000; i++) fputc('x', f);
    fclose(f);
    expect(&o, "miss (bad magic or version)", &ref, "garbage cache");
    expect(&o, "hit", &ref, "rewritten");
    test_old_format(&o, &ref);

    /* a valid cache made with other options, copied to this path, is refused */
    rn_dataset_opts o2 = o;
    o2.input_w = 192;
    char other[600], cmd[1400];
    rn_dataset_cache_path(other, sizeof other, "MuCo", g_dir, RN_SPLIT_TRAIN, &o2);
    RN_CHECK(strcmp(other, g_cache) != 0, "options change the cache path");
    expect(&o2, "miss (no cache)", NULL, "other input size");
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", other, g_cache);
    RN_CHECK(system(cmd) == 0, "cp");
    expect(&o, "miss (options or source files changed)", &ref, "foreign cache");

    same_size_edit();
    rn_dataset ds;
    if (load(&ds, &o) == 0) {
        RN_CHECK(strncmp(ds.cache_note, "miss (options or source files changed)", 38) == 0, "same-size edit: %s",
                 ds.cache_note);
        RN_CHECK(ds.n > 0 && ds.samples[0].width == 612, "edit shows in the records");
        rn_dataset_free(&ds);
    }

    char cdir[600];
    snprintf(cdir, sizeof cdir, "%s/cachedir", g_dir);
    rn_dataset_opts o3 = o;
    o3.cache_dir = cdir;
    snprintf(cdir, sizeof cdir, "%s/cachedir/a/b", g_dir);
    char want[700];
    snprintf(want, sizeof want, "miss (no cache), wrote %s/", cdir);
    expect(&o3, want, NULL, "missing cache dir is created");
    expect(&o3, "hit", NULL, "cache dir hit");
    snprintf(cdir, sizeof cdir, "%s/x", g_src);
    RN_CHECK(rn_dataset_load(&ds, "MuCo", g_dir, RN_SPLIT_TRAIN, &o3, &err) == -1 && strstr(err.msg, "cache folder") &&
                 strstr(err.msg, cdir),
             "cache dir under a file: '%s'", err.msg);
    test_user_fallback(&o);

    /* hash: deterministic, sensitive to one bit and to length */
    char a[100] = {0}, b[100] = {0};
    b[57] = 1;
    RN_CHECK(rn_hash64(a, 100, 0) == rn_hash64(a, 100, 0) && rn_hash64(a, 100, 0) != rn_hash64(b, 100, 0) &&
                 rn_hash64(a, 99, 0) != rn_hash64(a, 100, 0),
             "hash");
    rn_dataset_free(&ref);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    RN_CHECK(system(cmd) == 0, "cleanup");
    RN_CHECK_DONE();
}
