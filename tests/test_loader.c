/* Batch loader: coverage per epoch under sharding, determinism across worker
 * counts, the authors' equal-length mixing, exact resume, bad images. */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "data/load/joints.h"
#include "data/load/loader.h"

enum { N3 = 13, N2 = 5, IMG_W = 96, IMG_H = 72, NBIG = 16 };
static char tmpdir[256];
static char pool3[N3 * 16], pool2[N2 * 16];
static rn_sample s3[N3], s2[N2];
static rn_dataset d3, d2;

static void make_set(rn_dataset *d, rn_sample *s, char *pool, int n, const char *name, const char *prefix, int depth)
{
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        s[i] = (rn_sample){.path_off = (uint32_t)off, .k = 1000.0f + i, .root_vis = 1, .have_depth = depth};
        off += (size_t)sprintf(pool + off, "%s%d.jpg", prefix, i) + 1;
        s[i].bbox[0] = 10 + i, s[i].bbox[1] = 5, s[i].bbox[2] = 40, s[i].bbox[3] = 48;
        s[i].root_img[0] = s[i].bbox[0] + 20, s[i].root_img[1] = s[i].bbox[1] + 24, s[i].root_img[2] = 3000 + i;
    }
    *d = (rn_dataset){.samples = s, .n = (size_t)n, .strings = pool, .strings_len = off};
    snprintf(d->name, sizeof d->name, "%s", name);
    snprintf(d->data_dir, sizeof d->data_dir, "%s", tmpdir);
}

static void small_cfg(rn_loader_cfg *c, const rn_dataset *const *sets, int n, rn_split split)
{
    rn_loader_cfg_default(c, sets, n, split);
    c->batch = 4;
    c->crop.in_w = 32, c->crop.in_h = 32, c->crop.out_w = 8, c->crop.out_h = 8;
    c->seed = 77;
    c->quiet = 1;
}

/* Per epoch over all ranks: every item in [0, L) appears exactly once outside the pads. */
static void test_coverage(const rn_dataset *const *sets)
{
    for (int world = 1; world <= 3; world++) {
        for (int epoch = 0; epoch < 2; epoch++) {
            int seen[64] = {0}, pads = 0, nb0 = -1, L = 0;
            for (int rank = 0; rank < world; rank++) {
                rn_loader_cfg c;
                small_cfg(&c, sets, 2, RN_SPLIT_TRAIN);
                c.world = world, c.rank = rank, c.workers = 1 + rank % 3;
                rn_loader *ld;
                rn_err err = {0};
                RN_CHECK(rn_loader_create(&ld, &c, &err) == 0, "%s", err.msg);
                L = (int)rn_loader_items(ld);
                nb0 = nb0 < 0 ? rn_loader_batches(ld) : nb0;
                RN_CHECK(rn_loader_batches(ld) == nb0, "every rank has the same number of batches");
                rn_loader_start(ld, epoch, 0, &err);
                const rn_batch *b;
                while (rn_loader_next(ld, &b, &err) == 1)
                    for (int i = 0; i < b->n; i++) {
                        if (b->pad[i]) pads++;
                        else seen[b->item[i]]++;
                    }
                rn_loader_free(ld);
            }
            int ok = L == 2 * N3;
            for (int i = 0; i < L; i++) ok &= seen[i] == 1;
            int S = (L + world - 1) / world;
            RN_CHECK(ok, "world %d epoch %d: each item exactly once", world, epoch);
            RN_CHECK(pads == S * world - L, "world %d: %d pads, want %d", world, pads, S * world - L);
        }
    }
}

typedef struct run {
    float *img, *tgt;
    int32_t *set, *rec, *item;
    int n;
} run;

static void collect(run *r, const rn_dataset *const *sets, int workers, int epochs, int epoch0, int first)
{
    rn_loader_cfg c;
    small_cfg(&c, sets, 2, RN_SPLIT_TRAIN);
    c.workers = workers;
    c.prefetch = 2 + workers;
    rn_loader *ld;
    rn_err err = {0};
    RN_CHECK(rn_loader_create(&ld, &c, &err) == 0, "%s", err.msg);
    size_t plane = 3 * 32 * 32, cap = 64 * (size_t)epochs;
    *r = (run){.img = malloc(sizeof(float) * plane * cap), .tgt = malloc(sizeof(float) * 3 * cap),
               .set = malloc(4 * cap), .rec = malloc(4 * cap), .item = malloc(4 * cap)};
    for (int e = epoch0; e < epoch0 + epochs; e++) {
        RN_CHECK(rn_loader_start(ld, e, e == epoch0 ? first : 0, &err) == 0, "%s", err.msg);
        const rn_batch *b;
        while (rn_loader_next(ld, &b, &err) == 1) {
            memcpy(r->img + plane * r->n, b->images, sizeof(float) * plane * b->n);
            memcpy(r->tgt + 3 * r->n, b->target, sizeof(float) * 3 * b->n);
            memcpy(r->set + r->n, b->set, 4 * b->n), memcpy(r->rec + r->n, b->sample, 4 * b->n);
            memcpy(r->item + r->n, b->item, 4 * b->n);
            r->n += b->n;
        }
    }
    rn_loader_free(ld);
}

static void free_run(run *r) { free(r->img), free(r->tgt), free(r->set), free(r->rec), free(r->item); }

static void test_determinism(const rn_dataset *const *sets)
{
    run a, b, c;
    collect(&a, sets, 1, 2, 0, 0);
    collect(&b, sets, 3, 2, 0, 0);
    RN_CHECK(a.n == 4 * N3 && b.n == a.n, "two epochs of %d items: %d, %d", 2 * N3, a.n, b.n);
    RN_CHECK(!memcmp(a.img, b.img, sizeof(float) * 3 * 32 * 32 * a.n), "same images for 1 and 3 workers");
    RN_CHECK(!memcmp(a.tgt, b.tgt, sizeof(float) * 3 * a.n) && !memcmp(a.item, b.item, 4 * a.n),
             "same targets and order for 1 and 3 workers");
    RN_CHECK(memcmp(a.item, a.item + 2 * N3, 4 * 2 * N3), "a fresh shuffle each epoch");
    /* resume at epoch 1, batch 2 == the tail of the uninterrupted run */
    collect(&c, sets, 2, 1, 1, 2);
    int skip = 2 * N3 + 2 * 4;
    RN_CHECK(c.n == a.n - skip, "resume count %d", c.n);
    RN_CHECK(c.n == a.n - skip && !memcmp(c.img, a.img + (size_t)3 * 32 * 32 * skip, sizeof(float) * 3 * 32 * 32 * c.n),
             "resumed batches equal the uninterrupted run");
    /* the authors' make_same_len: set 1 (5 records, max 13) uses record d % 5 for d < 10 */
    int ok = 1, tail = 0;
    for (int i = 0; i < a.n; i++) {
        int set = a.item[i] / N3, d = a.item[i] % N3;
        ok &= a.set[i] == set;
        if (set == 1 && d < 10) ok &= a.rec[i] == d % N2;
        if (set == 1 && d >= 10) tail++, ok &= a.rec[i] >= 0 && a.rec[i] < N2;
        if (set == 0) ok &= a.rec[i] == d;
    }
    RN_CHECK(ok && tail == 6, "item -> record mapping follows MultipleDatasets (tail %d)", tail);
    free_run(&a), free_run(&b), free_run(&c);
}

typedef struct counting_alloc {
    int live, calls;
} counting_alloc;

static void *count_alloc(void *user, size_t bytes)
{
    counting_alloc *a = user;
    a->live++, a->calls++;
    return malloc(bytes);
}

static void count_free(void *user, void *p)
{
    ((counting_alloc *)user)->live--;
    free(p);
}

/* 8 workers with 2 slots give 1 worker's batches; every batch array comes
 * from the caller's allocator; workers 0 means one per core. */
static void test_sharing_alloc(const rn_dataset *const *sets)
{
    run one;
    collect(&one, sets, 1, 2, 0, 0);
    rn_loader_cfg c;
    small_cfg(&c, sets, 2, RN_SPLIT_TRAIN);
    c.workers = 8, c.prefetch = 2;
    counting_alloc ca = {0};
    c.buf_alloc = count_alloc, c.buf_free = count_free, c.buf_user = &ca;
    rn_loader *ld;
    rn_err err = {0};
    RN_CHECK(rn_loader_create(&ld, &c, &err) == 0, "%s", err.msg);
    RN_CHECK(ca.calls == 2 * 14 && ca.live == ca.calls, "2 slots of 14 arrays from buf_alloc (%d)", ca.calls);
    size_t plane = 3 * 32 * 32;
    int same = 1, n = 0;
    for (int e = 0; e < 2; e++) {
        RN_CHECK(rn_loader_start(ld, e, 0, &err) == 0, "%s", err.msg);
        const rn_batch *b;
        while (rn_loader_next(ld, &b, &err) == 1) {
            same &= n + b->n <= one.n && !memcmp(one.img + plane * n, b->images, sizeof(float) * plane * b->n);
            n += b->n;
        }
    }
    RN_CHECK(same && n == one.n, "8 workers with 2 slots give 1 worker's batches");
    rn_loader_free(ld);
    RN_CHECK(ca.live == 0, "every buf_alloc array freed through buf_free (%d live)", ca.live);
    c.buf_free = NULL;
    RN_CHECK(rn_loader_create(&ld, &c, &err) == -1 && strstr(err.msg, "buf_free"), "half an allocator: %s", err.msg);
    c.buf_alloc = NULL, c.workers = 0;
    RN_CHECK(rn_loader_create(&ld, &c, &err) == 0, "%s", err.msg);
    rn_loader_stats st;
    RN_CHECK(rn_loader_stats_get(ld, &st, NULL, 0) == rn_loader_auto_workers(), "workers 0: one per core");
    rn_loader_free(ld);
    free_run(&one);
}

/* Work is shared per sample: on 1024x1024 frames (milliseconds a sample), 8
 * workers with 2 batches of 4 in flight are all inside a sample at once, and
 * each decodes a share. (Per batch, at most 2 would ever work.) */
static void test_sharing_busy(const rn_dataset *big)
{
    rn_loader_cfg c;
    const rn_dataset *sets[1] = {big};
    small_cfg(&c, sets, 1, RN_SPLIT_TRAIN);
    c.workers = 8, c.prefetch = 2;
    rn_loader *ld;
    rn_err err = {0};
    RN_CHECK(rn_loader_create(&ld, &c, &err) == 0, "%s", err.msg);
    int n = 0, epochs = 3;
    for (int e = 0; e < epochs; e++) {
        RN_CHECK(rn_loader_start(ld, e, 0, &err) == 0, "%s", err.msg);
        const rn_batch *b;
        while (rn_loader_next(ld, &b, &err) == 1) n += b->n;
    }
    int64_t per[8] = {0}, total = 0;
    int busy = 0;
    rn_loader_stats st;
    RN_CHECK(rn_loader_stats_get(ld, &st, per, 8) == 8, "8 workers");
    for (int i = 0; i < 8; i++) total += per[i], busy += per[i] > 0;
    printf("8 workers, 2 slots of 4: at most %d busy at once; samples per worker %lld %lld %lld %lld %lld %lld %lld "
           "%lld\n", st.peak_busy, (long long)per[0], (long long)per[1], (long long)per[2], (long long)per[3],
           (long long)per[4], (long long)per[5], (long long)per[6], (long long)per[7]);
    RN_CHECK(total == n && n == epochs * (int)big->n, "every sample counted once (%lld of %d)", (long long)total, n);
    RN_CHECK(busy == 8, "all 8 workers decoded samples (%d did)", busy);
    RN_CHECK(st.peak_busy == 8, "8 workers inside a sample at once with 2 batches in flight (at most %d)", st.peak_busy);
    RN_CHECK(st.rows_read > 0 && st.stage_s[RN_CROP_STAGE_ROWS] > 0, "stage counters");
    rn_loader_free(ld);
}

/* Without make_same_len the sets are concatenated: L = 13 + 5; with world 2 the
 * test split shards in order, pads flagged. */
static void test_concat_and_test_shards(const rn_dataset *const *sets)
{
    rn_loader_cfg c;
    small_cfg(&c, sets, 2, RN_SPLIT_TRAIN);
    c.make_same_len = 0;
    rn_loader *ld;
    rn_err err = {0};
    RN_CHECK(rn_loader_create(&ld, &c, &err) == 0, "%s", err.msg);
    RN_CHECK(rn_loader_items(ld) == N3 + N2, "concatenated length %lld", (long long)rn_loader_items(ld));
    rn_loader_start(ld, 3, 0, &err);
    const rn_batch *b;
    int seen[N3 + N2] = {0}, ok = 1;
    while (rn_loader_next(ld, &b, &err) == 1)
        for (int i = 0; i < b->n; i++) {
            seen[b->item[i]]++;
            int want_set = b->item[i] >= N3, want_rec = b->item[i] - (want_set ? N3 : 0);
            ok &= b->set[i] == want_set && b->sample[i] == want_rec && b->have_depth[i] == (want_set ? 0 : 1);
        }
    for (int i = 0; i < N3 + N2; i++) ok &= seen[i] == 1;
    RN_CHECK(ok, "concatenated sets: each record once, have_depth per set");
    rn_loader_free(ld);
    int order[2][8], cnt[2] = {0, 0}, pads = 0;
    for (int rank = 0; rank < 2; rank++) {
        small_cfg(&c, sets, 1, RN_SPLIT_TEST);
        c.rank = rank, c.world = 2;
        RN_CHECK(rn_loader_create(&ld, &c, &err) == 0, "%s", err.msg);
        rn_loader_start(ld, 0, 0, &err);
        while (rn_loader_next(ld, &b, &err) == 1)
            for (int i = 0; i < b->n; i++) {
                pads += b->pad[i];
                if (cnt[rank] < 8) order[rank][cnt[rank]++] = b->sample[i];
            }
        rn_loader_free(ld);
    }
    /* 13 records, world 2: rank 0 gets 0, 2, ..., 12; rank 1 gets 1, 3, ..., 11 and a pad (record 0) */
    int inorder = cnt[0] == 7 && cnt[1] == 7;
    for (int k = 0; k < 7 && inorder; k++) inorder = order[0][k] == 2 * k && order[1][k] == (k < 6 ? 2 * k + 1 : 0);
    RN_CHECK(inorder && pads == 1, "test split sharded in order with one pad (%d, %d, pads %d)", cnt[0], cnt[1], pads);
}

static void test_values(const rn_dataset *const *sets)
{
    rn_loader_cfg c;
    small_cfg(&c, sets, 1, RN_SPLIT_TEST);
    rn_loader *ld;
    rn_err err = {0};
    RN_CHECK(rn_loader_create(&ld, &c, &err) == 0, "%s", err.msg);
    rn_loader_start(ld, 0, 0, &err);
    const rn_batch *b;
    int n = 0, ok = 1;
    while (rn_loader_next(ld, &b, &err) == 1)
        for (int i = 0; i < b->n; i++, n++) {
            /* root at the box centre lands on the patch centre: (out_w / 2, out_h / 2) */
            ok &= b->sample[i] == n && fabsf(b->target[3 * i] - 4) < 1e-4f && fabsf(b->target[3 * i + 1] - 4) < 1e-4f;
            ok &= b->target[3 * i + 2] == 3000 + n && b->k[i] == 1000 + n && b->have_depth[i] == 1 && b->vis[i] == 1;
            double x = b->inv[6 * i] * 16 + b->inv[6 * i + 1] * 16 + b->inv[6 * i + 2];
            ok &= fabs(x - (10 + n + 20)) < 1e-3;
            float xi, yi;
            rn_root_to_image(&xi, &yi, b->bbox + 4 * i, b->target[3 * i], b->target[3 * i + 1], 8, 8);
            ok &= fabsf(xi - (10 + n + 20)) < 1e-3f && fabsf(yi - 29) < 1e-3f;
        }
    RN_CHECK(ok && n == N3, "test split in order with targets, k, depth, inverse map (%d)", n);
    rn_loader_free(ld);
}

static void test_bad_images(const rn_dataset *const *sets)
{
    char path[512];
    snprintf(path, sizeof path, "%s/a3.jpg", tmpdir);
    remove(path);
    snprintf(path, sizeof path, "%s/a7.jpg", tmpdir);
    FILE *f = fopen(path, "wb");
    fputs("not a jpeg", f);
    fclose(f);
    rn_loader_cfg c;
    small_cfg(&c, sets, 2, RN_SPLIT_TRAIN);
    rn_loader *ld;
    rn_err err = {0};
    RN_CHECK(rn_loader_create(&ld, &c, &err) == 0, "%s", err.msg);
    rn_loader_start(ld, 0, 0, &err);
    const rn_batch *b;
    int n = 0, replaced = 0, rc, clean = 1;
    while ((rc = rn_loader_next(ld, &b, &err)) == 1)
        for (int i = 0; i < b->n; i++, n++) {
            replaced += b->replaced[i];
            clean &= !(b->set[i] == 0 && (b->sample[i] == 3 || b->sample[i] == 7));
        }
    RN_CHECK(rc == 0 && n == 2 * N3, "epoch completes with %d samples (%s)", n, err.msg);
    RN_CHECK(clean, "no batch entry comes from a bad image");
    RN_CHECK(replaced >= 2 && rn_loader_skipped(ld) >= 2, "bad images counted: %d replaced, %lld skipped", replaced,
             (long long)rn_loader_skipped(ld));
    rn_loader_free(ld);
    small_cfg(&c, sets, 1, RN_SPLIT_TEST);
    RN_CHECK(rn_loader_create(&ld, &c, &err) == 0, "%s", err.msg);
    rn_loader_start(ld, 0, 0, &err);
    while ((rc = rn_loader_next(ld, &b, &err)) == 1) {}
    RN_CHECK(rc == -1 && strstr(err.msg, "a3.jpg") && strstr(err.msg, "record 3"), "test split error: %s", err.msg);
    rn_loader_free(ld);
}

static void test_config_and_bind(const rn_dataset *const *sets)
{
    rn_loader_cfg c;
    small_cfg(&c, sets, 2, RN_SPLIT_TRAIN);
    c.rank = 2, c.world = 2;
    rn_loader *ld;
    rn_err err = {0};
    RN_CHECK(rn_loader_create(&ld, &c, &err) == -1 && strstr(err.msg, "rank 2 of world 2"), "bad rank: %s", err.msg);
    cpu_set_t set;
    RN_CHECK(sched_getaffinity(0, sizeof set, &set) == 0, "getaffinity");
    int core = 0;
    while (core < CPU_SETSIZE && !CPU_ISSET(core, &set)) core++;
    RN_CHECK(rn_bind_self(&core, 1, &err) == 0, "%s", err.msg);
    cpu_set_t now;
    sched_getaffinity(0, sizeof now, &now);
    RN_CHECK(CPU_COUNT(&now) == 1 && CPU_ISSET(core, &now), "pinned to core %d", core);
    sched_setaffinity(0, sizeof set, &set);
    /* bind_cores: workers on the last allowed core, compute gets the rest */
    small_cfg(&c, sets, 2, RN_SPLIT_TRAIN);
    c.bind_cores = 1;
    RN_CHECK(rn_loader_create(&ld, &c, &err) == 0, "%s", err.msg);
    int cores[CPU_SETSIZE], last = 0;
    for (int k = 0; k < CPU_SETSIZE; k++)
        if (CPU_ISSET(k, &set)) last = k;
    int n = rn_loader_compute_cores(ld, cores, CPU_SETSIZE), has_last = 0;
    for (int k = 0; k < n; k++) has_last |= cores[k] == last;
    RN_CHECK(n == CPU_COUNT(&set) - 1 && !has_last, "compute cores exclude the loader's core %d (%d of %d)", last, n,
             CPU_COUNT(&set));
    rn_loader_start(ld, 0, 0, &err);
    const rn_batch *b;
    int got = 0;
    while (rn_loader_next(ld, &b, &err) == 1) got += b->n;
    RN_CHECK(got == 2 * N3, "pinned loader runs an epoch (%d)", got);
    rn_loader_free(ld);
}

/* The last-batch policy: a short batch's rows n..batch-1 are padding (zero image, k 1, target, vis
 * and have_depth 0), also when its slot held a full batch before (prefetch 1). */
static void test_short_batch_padding(const rn_dataset *const *sets)
{
    rn_loader_cfg c;
    small_cfg(&c, sets, 1, RN_SPLIT_TEST);
    c.prefetch = 1;
    rn_loader *ld;
    rn_err err = {0};
    RN_CHECK(rn_loader_create(&ld, &c, &err) == 0, "%s", err.msg);
    rn_loader_start(ld, 0, 0, &err);
    const rn_batch *b;
    size_t plane = (size_t)3 * 32 * 32;
    int shorts = 0, ok = 1;
    while (rn_loader_next(ld, &b, &err) == 1) {
        if (b->n == c.batch) continue;
        shorts++;
        for (int i = b->n; i < c.batch; i++) {
            for (size_t j = 0; j < plane; j++) ok &= b->images[(size_t)i * plane + j] == 0.0f;
            ok &= b->k[i] == 1.0f && b->vis[i] == 0.0f && b->have_depth[i] == 0.0f;
            for (int j = 0; j < 3; j++) ok &= b->target[3 * i + j] == 0.0f;
        }
    }
    RN_CHECK(ok && shorts == 1, "the short last batch (%d of %d rows) is padded: zero image, k 1 (%d short)",
             N3 % c.batch, c.batch, shorts);
    rn_loader_free(ld);
}

/* An image's path: data_dir joined, or with data_dir "" (predict's sets of absolute paths) the path itself. */
static void test_image_path(void)
{
    char pool[64], buf[128];
    size_t l = (size_t)sprintf(pool, "a0.jpg") + 1;
    sprintf(pool + l, "/abs/b.jpg");
    rn_sample s[2] = {{.path_off = 0}, {.path_off = (uint32_t)l}};
    rn_dataset d = {.samples = s, .n = 2, .strings = pool, .strings_len = l + 11};
    snprintf(d.data_dir, sizeof d.data_dir, "data");
    RN_CHECK(!strcmp(rn_dataset_image_path(&d, &s[0], buf, sizeof buf), "data/a0.jpg"), "joined: %s", buf);
    d.data_dir[0] = 0;
    RN_CHECK(!strcmp(rn_dataset_image_path(&d, &s[1], buf, sizeof buf), "/abs/b.jpg"), "as given: %s", buf);
}

/* Joints for a set (J of them): spread around the box (some outside it), depths within +-1200 of the root. */
static void give_joints(rn_dataset *d, float *joints, int J, const char *skeleton)
{
    for (size_t i = 0; i < d->n; i++)
        for (int j = 0; j < J; j++) {
            float *r = joints + (i * (size_t)J + (size_t)j) * RN_JOINT_F;
            const rn_sample *s = &d->samples[i];
            r[RN_JOINT_IMG] = s->bbox[0] - 8 + (float)((j * 7 + (int)i) % 57);
            r[RN_JOINT_IMG + 1] = s->bbox[1] - 6 + (float)((j * 11 + 3 * (int)i) % 61);
            r[RN_JOINT_IMG + 2] = s->have_depth ? (float)((j * 131 + (int)i * 17) % 2400) - 1200.0f : 0.0f;
            r[RN_JOINT_VIS] = (j + (int)i) % 6 ? 1.0f : 0.0f;
        }
    d->J = J;
    d->joints = joints;
    d->bbox_real[0] = d->bbox_real[1] = 2000.0f;
    snprintf(d->skeleton, sizeof d->skeleton, "%s", skeleton);
}

/* With a skeleton the loader's rows are rn_loader_joint_targets of the sample's crop (test split: no
 * augmentation); K rows; the same for any worker count with augmentation; RootNet's K is 1. */
static void test_joint_rows(const rn_dataset *const *sets)
{
    rn_loader_cfg c;
    small_cfg(&c, sets, 1, RN_SPLIT_TEST);
    c.skeleton = "Human36M";
    rn_loader *ld;
    rn_err err = {0};
    RN_CHECK(rn_loader_create(&ld, &c, &err) == 0, "%s", err.msg);
    rn_loader_start(ld, 0, 0, &err);
    const rn_batch *b;
    int n = 0, same = 1, left = 0;
    rn_crop_ctx ctx = {0};
    float *x = malloc(sizeof(float) * 3 * 32 * 32);
    while (rn_loader_next(ld, &b, &err) == 1)
        for (int i = 0; i < b->n; i++, n++) {
            const rn_dataset *d = sets[0];
            const rn_sample *s = &d->samples[b->sample[i]];
            char path[8192];
            rn_crop_in in = {.path = rn_dataset_image_path(d, s, path, sizeof path), .root_vis = s->root_vis};
            memcpy(in.bbox, s->bbox, sizeof in.bbox);
            rn_aug aug;
            rn_aug_none(&aug);
            rn_crop_out out;
            float t[RN_LOADER_MAX_K * 3], v[RN_LOADER_MAX_K];
            int K = 0;
            same &= rn_crop_sample(x, &out, &ctx, &in, &aug, &c.crop, &err) == 0 &&
                    rn_loader_joint_targets(t, v, &K, d, (size_t)b->sample[i], "Human36M", &out, 0, &c.crop, 64, &err) == 0;
            for (int k = 0; k < 3 * 18; k++) same &= isfinite(t[k]);
            same &= b->K == 18 && K == 18 && !memcmp(t, b->target + 3 * 18 * i, sizeof(float) * 3 * 18) &&
                    !memcmp(v, b->vis + 18 * i, sizeof(float) * 18);
            for (int k = 0; k < 18; k++) left += v[k] == 0;
        }
    RN_CHECK(same && n == N3 && left > 0, "joint rows are rn_loader_joint_targets (%d rows, %d vis 0): %s", n, left, err.msg);
    free(x);
    rn_crop_ctx_free(&ctx);
    rn_loader_free(ld);
    float *rows[2] = {NULL, NULL};
    for (int r = 0; r < 2; r++) {
        small_cfg(&c, sets, 2, RN_SPLIT_TRAIN);
        c.skeleton = "Human36M";
        c.workers = r ? 3 : 1;
        RN_CHECK(rn_loader_create(&ld, &c, &err) == 0, "%s", err.msg);
        rn_loader_start(ld, 1, 0, &err);
        rows[r] = calloc((size_t)rn_loader_items(ld) + 8, sizeof(float) * 18 * 4);
        int at = 0, zero_ok = 1;
        while (rn_loader_next(ld, &b, &err) == 1)
            for (int i = 0; i < b->n; i++, at++) {
                memcpy(rows[r] + (size_t)at * 18 * 4, b->target + 3 * 18 * i, sizeof(float) * 3 * 18);
                memcpy(rows[r] + (size_t)at * 18 * 4 + 54, b->vis + 18 * i, sizeof(float) * 18);
                /* MSCOCO has no Torso, Neck nor Head (Human36M rows 7, 8, 10): 0 with vis 0 */
                if (b->set[i] == 1)
                    for (int k = 7; k <= 10; k += k == 8 ? 2 : 1)
                        zero_ok &= b->vis[18 * i + k] == 0 && b->target[3 * (18 * i + k)] == 0;
            }
        RN_CHECK(zero_ok && at == (int)rn_loader_items(ld), "a set's missing joints are 0 with vis 0 (%d)", at);
        rn_loader_free(ld);
    }
    RN_CHECK(rows[0] && rows[1] && !memcmp(rows[0], rows[1], sizeof(float) * 18 * 4 * (size_t)(2 * N3)),
             "joint rows the same with 1 and 3 workers");
    free(rows[0]), free(rows[1]);
    small_cfg(&c, sets, 1, RN_SPLIT_TEST);
    c.K = 5;
    RN_CHECK(rn_loader_create(&ld, &c, &err) == -1 && strstr(err.msg, "needs a skeleton"), "K without skeleton: %s", err.msg);
    c.skeleton = "MuCo";
    RN_CHECK(rn_loader_create(&ld, &c, &err) == -1 && strstr(err.msg, "MuCo has 21 joints"), "K mismatch: %s", err.msg);
    c.K = 0, c.skeleton = "Foo";
    RN_CHECK(rn_loader_create(&ld, &c, &err) == -1 && strstr(err.msg, "unknown joint set 'Foo'"), "unknown: %s", err.msg);
}

int main(void)
{
    test_image_path();
    snprintf(tmpdir, sizeof tmpdir, "/tmp/rn_loader_XXXXXX");
    RN_CHECK(mkdtemp(tmpdir) != NULL, "mkdtemp");
    const char *py = getenv("PY") ? getenv("PY") : "/usr/bin/python3";
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "%s -c \"import cv2, numpy as np; rs = np.random.RandomState(1)\n"
             "for p, n in (('a', %d), ('b', %d)):\n"
             "    for i in range(n): cv2.imwrite('%s/%%s%%d.jpg' %% (p, i), rs.randint(0, 255, (%d, %d, 3)).astype(np.uint8))\"",
             py, N3, N2, tmpdir, IMG_H, IMG_W);
    RN_CHECK(system(cmd) == 0, "image generation: %s", cmd);
    make_set(&d3, s3, pool3, N3, "MuCo", "a", 1);
    make_set(&d2, s2, pool2, N2, "MSCOCO", "b", 0);
    const rn_dataset *sets[2] = {&d3, &d2};
    test_coverage(sets);
    test_determinism(sets);
    test_sharing_alloc(sets);
    snprintf(cmd, sizeof cmd,
             "%s -c \"import cv2, numpy as np; rs = np.random.RandomState(2)\n"
             "for i in range(4): cv2.imwrite('%s/c%%d.jpg' %% i, rs.randint(0, 255, (1024, 1024, 3)).astype(np.uint8))\"",
             py, tmpdir);
    RN_CHECK(system(cmd) == 0, "image generation: %s", cmd);
    static char pool_big[NBIG * 16];
    static rn_sample s_big[NBIG];
    rn_dataset big;
    make_set(&big, s_big, pool_big, NBIG, "MuCo", "c", 1);
    for (int i = 0; i < NBIG; i++) {
        s_big[i].path_off = (uint32_t)(i % 4 * 7);
        s_big[i].bbox[0] = 100.0f + 10 * i, s_big[i].bbox[1] = 150, s_big[i].bbox[2] = s_big[i].bbox[3] = 700;
    }
    test_sharing_busy(&big);
    test_values(sets);
    test_short_batch_padding(sets);
    test_concat_and_test_shards(sets);
    test_config_and_bind(sets);
    static float j3[N3 * 21 * RN_JOINT_F], j2[N2 * 19 * RN_JOINT_F];
    give_joints(&d3, j3, 21, "MuCo");
    give_joints(&d2, j2, 19, "MSCOCO");
    test_joint_rows(sets);
    test_bad_images(sets);
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    RN_CHECK(system(cmd) == 0, "cleanup");
    RN_CHECK_DONE();
}
