/* The contracts of include/rootnet.h, through the installed library only
 * (tests/t_capi.sh builds this with pkg-config): statuses and messages for bad
 * arguments, the options' size field, a handle reused across calls and
 * batch sizes, a padded stride, and two handles on two threads at once.
 *
 *   capi_contract SNAPSHOT     (prints "N passed, N failed"; exit 1 on any failure)
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rootnet.h>

static int passed, failed;

static void check(int ok, const char *what)
{
    if (ok) passed++;
    else failed++, printf("FAIL: %s\n", what);
}

#define W 200
#define H 160

/* A deterministic picture: smooth gradients and a few edges. */
static void make_pixels(unsigned char *px, size_t stride)
{
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            unsigned char *p = px + (size_t)y * stride + 3 * (size_t)x;
            p[0] = (unsigned char)(x + y), p[1] = (unsigned char)(3 * x ^ y), p[2] = (unsigned char)((x / 16 + y / 16) % 2 * 200);
        }
}

static int same_roots(const rootnet_root *a, const rootnet_root *b, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < 3; j++)
            if (a[i].img[j] != b[i].img[j] || a[i].cam[j] != b[i].cam[j]) return 0;
    return 1;
}

static int has(const char *msg, const char *part)
{
    return strstr(msg, part) != NULL;
}

static void check_create(const char *snap)
{
    char msg[256];
    rootnet_predictor *p = (rootnet_predictor *)&msg;
    check(rootnet_create(NULL, snap, NULL, msg, sizeof msg) == ROOTNET_ERR_ARGUMENT && has(msg, "out"), "NULL out");
    check(rootnet_create(&p, NULL, NULL, msg, sizeof msg) == ROOTNET_ERR_ARGUMENT && has(msg, "snapshot"),
          "NULL snapshot");
    check(rootnet_create(&p, "/nonexistent/w.safetensors", NULL, msg, sizeof msg) == ROOTNET_ERR_SNAPSHOT &&
              p == NULL && has(msg, "/nonexistent/w.safetensors"),
          "missing snapshot: status, NULL handle, the path in the message");
    rootnet_options o;
    rootnet_options_init(&o);
    o.size = 0;
    check(rootnet_create(&p, snap, &o, msg, sizeof msg) == ROOTNET_ERR_ARGUMENT && has(msg, "options.size"),
          "options.size 0 refused");
    struct {
        rootnet_options o;
        int future;
    } big = {.future = 0};
    rootnet_options_init(&big.o);
    big.o.size = sizeof big;
    check(rootnet_create(&p, snap, &big.o, msg, sizeof msg) == ROOTNET_OK, "a newer caller's options, new field unset");
    rootnet_destroy(p);
    big.future = 7;
    check(rootnet_create(&p, snap, &big.o, msg, sizeof msg) == ROOTNET_ERR_ARGUMENT && has(msg, "does not know"),
          "a newer caller's options with a field set this library lacks");
    rootnet_options_init(&o);
    o.precision = "fp64";
    check(rootnet_create(&p, snap, &o, msg, sizeof msg) == ROOTNET_ERR_ARGUMENT && has(msg, "fp64"), "precision fp64");
    o.precision = "bf16-o2";
    check(rootnet_create(&p, snap, &o, msg, sizeof msg) == ROOTNET_ERR_ARGUMENT, "precision bf16-o2");
    o.precision = NULL, o.device = "tpu";
    check(rootnet_create(&p, snap, &o, msg, sizeof msg) == ROOTNET_ERR_DEVICE && has(msg, "tpu"), "device tpu");
    o.device = NULL, o.threads = -1;
    check(rootnet_create(&p, snap, &o, msg, sizeof msg) == ROOTNET_ERR_ARGUMENT, "threads -1");
    char tiny[8];
    check(rootnet_create(&p, "/nonexistent/w.safetensors", NULL, tiny, sizeof tiny) == ROOTNET_ERR_SNAPSHOT &&
              strlen(tiny) == sizeof tiny - 1,
          "message truncated to the buffer");
    check(rootnet_create(&p, "/nonexistent/w.safetensors", NULL, NULL, 0) == ROOTNET_ERR_SNAPSHOT, "msg NULL");
}

static void check_bad_calls(rootnet_predictor *p, const rootnet_image *img)
{
    rootnet_root out[2];
    rootnet_box ok[2] = {{20, 10, 60, 120}, {100, 30, 50, 100}};
    rootnet_box nan_box[2] = {{20, 10, 60, 120}, {NAN, 30, 50, 100}};
    rootnet_box outside[1] = {{500, 400, 50, 50}};
    rootnet_image narrow = *img;
    narrow.stride = 3 * W - 1;
    rootnet_image nopx = *img;
    nopx.rgb = NULL;
    check(rootnet_predict(NULL, img, ok, 2, NULL, out, NULL) == ROOTNET_ERR_ARGUMENT, "NULL handle");
    check(rootnet_predict(p, NULL, ok, 2, NULL, out, NULL) == ROOTNET_ERR_ARGUMENT &&
              has(rootnet_last_error(p), "image"), "NULL image");
    check(rootnet_predict(p, &nopx, ok, 2, NULL, out, NULL) == ROOTNET_ERR_ARGUMENT, "NULL pixels");
    check(rootnet_predict(p, &narrow, ok, 2, NULL, out, NULL) == ROOTNET_ERR_ARGUMENT &&
              has(rootnet_last_error(p), "stride"), "stride below 3 * width");
    check(rootnet_predict(p, img, ok, 0, NULL, out, NULL) == ROOTNET_ERR_ARGUMENT, "0 boxes");
    check(rootnet_predict(p, img, ok, 65, NULL, out, NULL) == ROOTNET_ERR_ARGUMENT, "65 boxes");
    check(rootnet_predict(p, img, nan_box, 2, NULL, out, NULL) == ROOTNET_ERR_INPUT &&
              has(rootnet_last_error(p), "box 2"), "a NaN box: named by number");
    check(rootnet_predict(p, img, outside, 1, NULL, out, NULL) == ROOTNET_ERR_INPUT && has(rootnet_last_error(p), "box 1"),
          "a box outside the image");
    rootnet_camera neg = {.focal = {-5, 1500}};
    check(rootnet_predict(p, img, ok, 2, &neg, out, NULL) == ROOTNET_ERR_INPUT && has(rootnet_last_error(p), "focal"),
          "negative focal");
    check(rootnet_predict(p, img, ok, 2, NULL, out, NULL) == ROOTNET_OK && rootnet_last_error(p)[0] == '\0',
          "a good call after bad ones; last error cleared");
}

/* precision bf16 (where the device runs it): near fp32's roots, not equal to them. */
static void check_bf16(const char *snap, const rootnet_image *img, const rootnet_box *b, const rootnet_root *fp32)
{
    rootnet_options o;
    rootnet_options_init(&o);
    o.threads = 1, o.precision = "bf16";
    rootnet_predictor *p;
    char msg[256];
    rootnet_status st = rootnet_create(&p, snap, &o, msg, sizeof msg);
    check(st == ROOTNET_OK || (st == ROOTNET_ERR_DEVICE && strstr(msg, "bf16")), msg);
    if (st) {
        printf("note: bf16 not checked: %s\n", msg);
        return;
    }
    rootnet_root r[3];
    rootnet_camera cam = {.focal = {900, 1100}, .princpt = {90, 70}, .has_princpt = 1};
    check(rootnet_predict(p, img, b, 3, &cam, r, NULL) == ROOTNET_OK, "bf16 predict");
    double worst_xy = 0, worst_z = 0;
    for (int i = 0; i < 3; i++) {
        worst_xy = fmax(worst_xy, fmax(fabs(r[i].img[0] - fp32[i].img[0]), fabs(r[i].img[1] - fp32[i].img[1])));
        worst_z = fmax(worst_z, fabs(r[i].img[2] / fp32[i].img[2] - 1));
    }
    printf("bf16 against fp32: worst x, y %.3g px, depth %.3g relative\n", worst_xy, worst_z);
    check(worst_xy < 2 && worst_z < 0.02, "bf16 roots near fp32's");
    check(!same_roots(r, fp32, 3), "bf16 roots differ from fp32's (the option reached the model)");
    rootnet_destroy(p);
}

typedef struct job {
    const char *snap;
    const rootnet_image *img;
    rootnet_root out[3];
    int rc;
} job;

static void *run_job(void *arg)
{
    job *j = arg;
    rootnet_options o;
    rootnet_options_init(&o);
    o.threads = 1;
    rootnet_predictor *p;
    rootnet_box b[3] = {{20, 10, 60, 120}, {100, 30, 50, 100}, {5, 5, 190, 150}};
    j->rc = rootnet_create(&p, j->snap, &o, NULL, 0);
    if (!j->rc) j->rc = rootnet_predict(p, j->img, b, 3, NULL, j->out, NULL);
    rootnet_destroy(p);
    return NULL;
}

typedef struct shared_job {
    rootnet_predictor *p;
    const rootnet_image *img;
    const rootnet_root *want;
    int ok, busy, other, wrong;
} shared_job;

/* Calls on a handle shared with another thread: each OK or BUSY, every OK one the serial roots. */
static void *run_shared(void *arg)
{
    shared_job *j = arg;
    rootnet_box b[3] = {{20, 10, 60, 120}, {100, 30, 50, 100}, {5, 5, 190, 150}};
    for (int i = 0; i < 300; i++) {
        rootnet_root out[3];
        rootnet_status st = rootnet_predict(j->p, j->img, b, 3, NULL, out, NULL);
        if (st == ROOTNET_OK) j->ok++, j->wrong += !same_roots(out, j->want, 3);
        else if (st == ROOTNET_ERR_BUSY) j->busy++;
        else j->other++;
    }
    return NULL;
}

/* One handle on two threads at once (which the header forbids): the overlapping calls are refused with
 * ROOTNET_ERR_BUSY, and every call that runs gives the serial roots (0606e47 ran them on shared buffers). */
static void check_shared(rootnet_predictor *p, const rootnet_image *img, const rootnet_root *want)
{
    shared_job j[2] = {{.p = p, .img = img, .want = want}, {.p = p, .img = img, .want = want}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, run_shared, &j[i]);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    int ok = j[0].ok + j[1].ok, busy = j[0].busy + j[1].busy;
    printf("one handle, two threads: %d calls ran, %d refused as busy, %d other, %d wrong\n", ok, busy,
           j[0].other + j[1].other, j[0].wrong + j[1].wrong);
    check(busy > 0 && ok > 0 && j[0].other + j[1].other == 0, "one handle on two threads: overlapping calls are BUSY");
    check(j[0].wrong + j[1].wrong == 0, "one handle on two threads: every call that ran gives the serial roots");
    check(!strcmp(rootnet_status_string(ROOTNET_ERR_BUSY), "predictor in use by another thread"), "BUSY's string");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: capi_contract SNAPSHOT\n");
        return 2;
    }
    const char *snap = argv[1];
    check(rootnet_version()[0] != '\0' && rootnet_api_version() == ROOTNET_API_VERSION, "version");
    check(!strcmp(rootnet_status_string(ROOTNET_OK), "ok") && rootnet_status_string(ROOTNET_ERR_INPUT)[0],
          "status strings");
    check_create(snap);

    unsigned char *tight = malloc(3 * W * H), *padded = malloc((3 * W + 13) * H);
    make_pixels(tight, 3 * W);
    memset(padded, 0xA5, (3 * W + 13) * H);
    make_pixels(padded, 3 * W + 13);
    rootnet_image img = {.rgb = tight, .width = W, .height = H, .stride = 3 * W};
    rootnet_image img_pad = {.rgb = padded, .width = W, .height = H, .stride = 3 * W + 13};

    rootnet_options o;
    rootnet_options_init(&o);
    o.threads = 1;
    rootnet_predictor *p, *q;
    char msg[256];
    int rc = rootnet_create(&p, snap, &o, msg, sizeof msg);
    check(rc == ROOTNET_OK, msg);
    if (rc) return 1;
    check(rootnet_input_size(p) > 0 && rootnet_input_size(p) % 32 == 0, "input size");
    check_bad_calls(p, &img);

    rootnet_box b[3] = {{20, 10, 60, 120}, {100, 30, 50, 100}, {5, 5, 190, 150}};
    rootnet_root one[1], three[3], three_pad[3], again[1];
    rootnet_info info;
    rootnet_camera cam = {.focal = {900, 1100}, .princpt = {90, 70}, .has_princpt = 1};
    check(rootnet_create(&q, snap, &o, msg, sizeof msg) == ROOTNET_OK, "second handle");
    check(rootnet_predict(q, &img, b, 1, &cam, one, &info) == ROOTNET_OK, "fresh handle, 1 box");
    check(info.focal[0] == 900 && info.focal[1] == 1100 && info.princpt[0] == 90 && !info.default_focal &&
              !info.default_princpt, "info: the intrinsics given");
    check(fabs(one[0].cam[2] - one[0].img[2]) == 0 && fabs(one[0].cam[0] - (one[0].img[0] - 90) / 900 * one[0].img[2]) <
              1e-9 * fabs(one[0].img[2]) + 1e-9, "camera X from x, cx, fx, depth");
    check(rootnet_predict(p, &img, b, 3, &cam, three, NULL) == ROOTNET_OK, "3 boxes (the batch grows)");
    check(rootnet_predict(p, &img_pad, b, 3, &cam, three_pad, NULL) == ROOTNET_OK && same_roots(three, three_pad, 3),
          "a padded stride gives the same roots");
    check(rootnet_predict(p, &img, b, 1, &cam, again, NULL) == ROOTNET_OK && same_roots(one, again, 1),
          "1 box in a batch-3 model equals a fresh handle's");
    check(same_roots(one, three, 1), "box 1 alone equals box 1 among three");
    check(rootnet_predict(p, &img, b, 1, NULL, again, &info) == ROOTNET_OK && info.default_focal &&
              info.focal[0] == 1500 && info.princpt[0] == W / 2.0 && info.princpt[1] == H / 2.0,
          "no camera: focal 1500 and the image centre, said in info");
    rootnet_destroy(q);
    check_bf16(snap, &img, b, three);

    job j[2] = {{.snap = snap, .img = &img}, {.snap = snap, .img = &img_pad}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, run_job, &j[i]);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    rootnet_root serial[3];
    check(rootnet_predict(p, &img, b, 3, NULL, serial, NULL) == ROOTNET_OK, "serial 3 boxes");
    check(j[0].rc == ROOTNET_OK && j[1].rc == ROOTNET_OK && same_roots(j[0].out, serial, 3) &&
              same_roots(j[1].out, serial, 3), "two handles on two threads at once equal the serial run");
    check_shared(p, &img, serial);
    rootnet_destroy(p);
    rootnet_destroy(NULL);
    free(tight);
    free(padded);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
