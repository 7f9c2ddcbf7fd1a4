#include "data/sets/cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define CACHE_MAGIC "RNDSCAC1"
enum { CACHE_VERSION = 4, CACHE_ALIGN = 64 };

typedef struct cache_hdr {
    char magic[8];
    uint32_t version, sample_size;
    uint64_t n_samples, strings_len;
    uint64_t samples_off, strings_off, total_len;
    uint64_t payload_hash; /* of samples, strings and joints */
    uint64_t header_hash;  /* of this header (with header_hash 0) */
    rn_cache_key key;
    uint32_t joints_J, joint_f; /* joints per record (0: none), floats per joint (RN_JOINT_F) */
    char skeleton[32];          /* their joint set, "" when joints_J == 0 */
    uint64_t joints_off;        /* n_samples * joints_J * joint_f floats there */
} cache_hdr;

void rn_cache_key_init(rn_cache_key *k, const char *name, rn_split split, const rn_dataset_opts *o,
                       const float bbox_real[2])
{
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s", name);
    k->split = (int32_t)split;
    k->protocol = o->protocol;
    k->use_det_bbox = o->use_det_bbox;
    k->input_w = o->input_w;
    k->input_h = o->input_h;
    k->bbox_real[0] = bbox_real[0];
    k->bbox_real[1] = bbox_real[1];
}

int rn_cache_key_add_source(rn_cache_key *k, const char *path, rn_err *err)
{
    RN_ASSERT(k->n_sources < RN_CACHE_MAX_SOURCES);
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0) return rn_err_set(err, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(fd, &st)) {
        close(fd);
        return rn_err_set(err, "%s: cannot stat: %s", path, strerror(errno));
    }
    rn_cache_source *s = &k->src[k->n_sources++];
    s->path_hash = rn_hash64(path, strlen(path), 1);
    s->size = (uint64_t)st.st_size;
    s->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ULL + (uint64_t)st.st_mtim.tv_nsec;
    s->content_hash = 0;
    if (st.st_size > 0) {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
        if (p == MAP_FAILED) {
            close(fd);
            return rn_err_set(err, "%s: mmap failed: %s", path, strerror(errno));
        }
        madvise(p, (size_t)st.st_size, MADV_SEQUENTIAL);
        s->content_hash = rn_hash64(p, (size_t)st.st_size, 2);
        munmap(p, (size_t)st.st_size);
    }
    close(fd);
    return 0;
}

static size_t align_up(size_t x) { return (x + CACHE_ALIGN - 1) / CACHE_ALIGN * CACHE_ALIGN; }

static uint64_t header_hash(const cache_hdr *h)
{
    cache_hdr c = *h;
    c.header_hash = 0;
    return rn_hash64(&c, sizeof c, 3);
}

static uint64_t payload_hash(const rn_sample *s, size_t n, const char *str, size_t len, const float *j,
                             size_t nj)
{
    uint64_t h = rn_hash64(s, n * sizeof *s, 4) ^ rn_mix64(rn_hash64(str, len, 5));
    return nj ? h ^ rn_mix64(rn_mix64(rn_hash64(j, nj * sizeof *j, 6))) : h;
}

static size_t joint_floats(const cache_hdr *h) { return (size_t)h->n_samples * h->joints_J * h->joint_f; }

/* The joints' part of the layout; a reason, or NULL if valid. */
static const char *joints_check(const cache_hdr *h, size_t len)
{
    if (h->joints_J == 0) return h->joints_off == 0 && h->skeleton[0] == 0 ? NULL : "bad joints layout";
    if (h->joint_f != RN_JOINT_F || h->joints_J > 1024 || h->skeleton[0] == 0 ||
        memchr(h->skeleton, 0, sizeof h->skeleton) == NULL)
        return "bad joints layout";
    if (h->joints_off < h->strings_off + h->strings_len || h->joints_off > len || h->joints_off % sizeof(float) ||
        h->n_samples > (len - h->joints_off) / sizeof(float) / (h->joints_J * (uint64_t)h->joint_f))
        return "bad joints layout";
    return NULL;
}

/* Structure checks on a mapped file; returns a reason, or NULL if valid. */
static const char *cache_check(const cache_hdr *h, const unsigned char *base, size_t len, const rn_cache_key *k)
{
    if (len < sizeof *h) return "shorter than its header";
    if (!memcmp(h->magic, CACHE_MAGIC, 8) && h->version < CACHE_VERSION) return RN_CACHE_OLD_FORMAT;
    if (memcmp(h->magic, CACHE_MAGIC, 8) || h->version != CACHE_VERSION) return "bad magic or version";
    if (h->header_hash != header_hash(h)) return "header hash mismatch";
    if (h->sample_size != sizeof(rn_sample)) return "record size differs";
    if (memcmp(&h->key, k, sizeof *k)) return "options or source files changed";
    if (h->total_len != len || h->samples_off < sizeof *h || h->strings_len == 0 ||
        h->n_samples > (len - h->samples_off) / sizeof(rn_sample) ||
        h->strings_off < h->samples_off + h->n_samples * sizeof(rn_sample) || h->strings_off > len ||
        h->strings_len > len - h->strings_off)
        return "bad layout";
    const char *bad = joints_check(h, len);
    if (bad) return bad;
    const rn_sample *s = (const rn_sample *)(base + h->samples_off);
    const char *str = (const char *)(base + h->strings_off);
    const float *j = h->joints_J ? (const float *)(base + h->joints_off) : NULL;
    if (str[h->strings_len - 1] != '\0') return "string pool not terminated";
    if (payload_hash(s, h->n_samples, str, h->strings_len, j, joint_floats(h)) != h->payload_hash)
        return "payload hash mismatch";
    for (size_t i = 0; i < h->n_samples; i++)
        if (s[i].path_off >= h->strings_len) return "bad string offset";
    return NULL;
}

int rn_cache_open(rn_dataset *ds, const char *path, const rn_cache_key *k, char why[128])
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) || st.st_size <= 0) {
        if (fd >= 0) close(fd);
        if (why) snprintf(why, 128, "no cache");
        return -1;
    }
    size_t len = (size_t)st.st_size;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        if (why) snprintf(why, 128, "mmap failed");
        return -1;
    }
    const cache_hdr *h = p;
    const char *bad = cache_check(h, p, len, k);
    if (bad) {
        munmap(p, len);
        if (why) snprintf(why, 128, "%s", bad);
        return -1;
    }
    ds->mapping = p;
    ds->mapping_len = len;
    ds->samples = (rn_sample *)((unsigned char *)p + h->samples_off);
    ds->n = h->n_samples;
    ds->strings = (const char *)p + h->strings_off;
    ds->strings_len = h->strings_len;
    ds->J = (int)h->joints_J;
    snprintf(ds->skeleton, sizeof ds->skeleton, "%s", h->skeleton);
    ds->joints = h->joints_J ? (float *)((unsigned char *)p + h->joints_off) : NULL;
    return 0;
}

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

static void fill_header(cache_hdr *h, const rn_cache_key *k, const rn_cache_payload *p)
{
    memset(h, 0, sizeof *h);
    memcpy(h->magic, CACHE_MAGIC, 8);
    h->version = CACHE_VERSION;
    h->sample_size = sizeof(rn_sample);
    h->n_samples = p->n;
    h->strings_len = p->strings_len;
    h->samples_off = align_up(sizeof *h);
    h->strings_off = align_up(h->samples_off + p->n * sizeof *p->s);
    h->total_len = h->strings_off + p->strings_len;
    if (p->J > 0) {
        h->joints_J = (uint32_t)p->J;
        h->joint_f = RN_JOINT_F;
        snprintf(h->skeleton, sizeof h->skeleton, "%s", p->skeleton);
        h->joints_off = align_up(h->total_len);
        h->total_len = h->joints_off + joint_floats(h) * sizeof(float);
    }
    h->payload_hash = payload_hash(p->s, p->n, p->strings, p->strings_len, p->joints, joint_floats(h));
    h->key = *k;
    h->header_hash = header_hash(h);
}

static int write_payload(int fd, const cache_hdr *h, const rn_cache_payload *p)
{
    static const char zeros[CACHE_ALIGN] = {0};
    size_t samples_end = h->samples_off + p->n * sizeof *p->s, strings_end = h->strings_off + p->strings_len;
    int bad = write_all(fd, h, sizeof *h) || write_all(fd, zeros, h->samples_off - sizeof *h) ||
              write_all(fd, p->s, p->n * sizeof *p->s) || write_all(fd, zeros, h->strings_off - samples_end) ||
              write_all(fd, p->strings, p->strings_len);
    if (!bad && h->joints_J)
        bad = write_all(fd, zeros, h->joints_off - strings_end) ||
              write_all(fd, p->joints, joint_floats(h) * sizeof(float));
    return bad;
}

int rn_cache_write(const char *path, const rn_cache_key *k, const rn_cache_payload *pl, rn_err *err)
{
    const char empty = '\0';
    rn_cache_payload p = *pl;
    if (p.strings_len == 0) p.strings = &empty, p.strings_len = 1;
    if (p.J <= 0 || !p.skeleton) p.J = 0;
    cache_hdr h;
    fill_header(&h, k, &p);
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return rn_err_set(err, "%s: cannot create: %s", tmp, strerror(errno));
    int bad = write_payload(fd, &h, &p) || fsync(fd);
    bad |= close(fd) != 0;
    if (bad || rename(tmp, path)) {
        int e = errno;
        unlink(tmp);
        return rn_err_set(err, "%s: cannot write cache: %s", path, strerror(e));
    }
    return 0;
}
