/* Readers, process_bbox, k and the cache on small files written here, checked
 * against values worked out by hand (see the comments next to each number). */
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "data/sets/bbox.h"
#include "data/sets/sample.h"

static char g_dir[256];

static int near(double a, double b, double tol) { return fabs(a - b) <= tol * (1 + fabs(b)); }

static void mkdirs(const char *path)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(buf, 0755);
            *p = '/';
        }
    mkdir(buf, 0755);
}

/* Writes data_dir/rel with printf-formatted content. */
__attribute__((format(printf, 3, 4))) static void wfile(const char *dd, const char *rel, const char *fmt, ...)
{
    char path[1024], dir[1024];
    snprintf(path, sizeof path, "%s/%s", dd, rel);
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = 0;
    mkdirs(dir);
    FILE *f = fopen(path, "w");
    RN_CHECK(f != NULL, "open %s", path);
    if (!f) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fclose(f);
}

static void new_dir(char *out, size_t n, const char *tag)
{
    snprintf(out, n, "%s/%s", g_dir, tag);
    mkdirs(out);
}

/* nj rows (21: MuCo, 17: MuPoTS): zeros but the root row (index 14). */
static const char *rows_n(char *buf, size_t n, int nj, int dims, double a, double b, double c)
{
    size_t at = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < 14; i++) at += (size_t)snprintf(buf + at, n - at, dims == 3 ? "[0,0,0]," : "[0,0],");
    if (dims == 3) at += (size_t)snprintf(buf + at, n - at, "[%g,%g,%g]", a, b, c);
    else at += (size_t)snprintf(buf + at, n - at, "[%g,%g]", a, b);
    for (int i = 15; i < nj; i++) at += (size_t)snprintf(buf + at, n - at, dims == 3 ? ",[0,0,0]" : ",[0,0]");
    snprintf(buf + at, n - at, "]");
    return buf;
}

static const char *rows(char *buf, size_t n, int dims, double a, double b, double c)
{
    return rows_n(buf, n, 21, dims, a, b, c);
}

static const rn_dataset_opts NOCACHE = {.protocol = 2, .input_w = 256, .input_h = 256, .no_cache = 1};

static void test_bbox(void)
{
    double in[4] = {10, 20, 100, 50}, out[4];
    /* clip: (10, 20, 99, 49); centre (59.5, 44.5); square 99 x 99; x1.25 = 123.75 */
    RN_CHECK(rn_bbox_process(out, in, 0, 640, 480, 1.0, 100 * 50) == 0, "kept");
    RN_CHECK(near(out[0], -2.375, 1e-12) && near(out[1], -17.375, 1e-12), "xy %g %g", out[0], out[1]);
    RN_CHECK(near(out[2], 123.75, 1e-12) && near(out[3], 123.75, 1e-12), "wh %g %g", out[2], out[3]);
    /* numpy int array: sizes 123, x = trunc(59.5 - 61.5) = -2, y = trunc(44.5 - 61.5) = -17 */
    RN_CHECK(rn_bbox_process(out, in, 1, 640, 480, 1.0, 100 * 50) == 0, "kept int");
    RN_CHECK(out[0] == -2 && out[1] == -17 && out[2] == 123 && out[3] == 123, "int %g %g %g %g", out[0], out[1],
             out[2], out[3]);
    /* aspect 0.75 (192 x 256): w 99 > 0.75 * 49 -> h = 132 -> 123.75 x 165 */
    RN_CHECK(rn_bbox_process(out, in, 0, 640, 480, 0.75, 1) == 0 && near(out[3], 165, 1e-12) &&
                 near(out[2], 123.75, 1e-12),
             "aspect 0.75: %g %g", out[2], out[3]);
    /* clipped at the right edge: x2 = min(639, 600 + 99) = 639 -> w = 39 */
    double edge[4] = {600, 100, 100, 100};
    RN_CHECK(rn_bbox_process(out, edge, 0, 640, 480, 1.0, 1e4) == 0 && near(out[2], 99 * 1.25, 1e-12) &&
                 near(out[0], 600 + 19.5 - 61.875, 1e-12),
             "edge: %g %g", out[0], out[2]);
    double outside[4] = {700, 10, 50, 50}, zero[4] = {10, 10, 0, 50}, tiny[4] = {10, 10, 0.5, 0.5};
    RN_CHECK(rn_bbox_process(out, outside, 0, 640, 480, 1.0, 2500) == 1, "outside dropped");
    RN_CHECK(rn_bbox_process(out, zero, 0, 640, 480, 1.0, 0) == 1, "empty dropped");
    RN_CHECK(rn_bbox_process(out, tiny, 0, 640, 480, 1.0, 0.25) == 1, "sub-pixel box dropped (area 0)");
    RN_CHECK(rn_bbox_process(out, in, 0, 640, 480, 1.0, 0) == 1, "COCO area 0 dropped");
    /* k = sqrt(2000 * 2000 * 1000 * 1000 / 123.75^2) = 2e6 / 123.75 */
    RN_CHECK(near(rn_bbox_k(2000, 2000, 1000, 1000, 123.75 * 123.75), 16161.616161616, 1e-12), "k");
    double R[9] = {1, 0, 0, 0, 0, -1, 0, 1, 0}, t[3] = {10, 20, 30}, w[3] = {100, 3000, 500}, cam[3], px[3];
    double f[2] = {1000, 1000}, c[2] = {500, 500};
    rn_world2cam(cam, w, R, t); /* (100, -500, 3000) + t */
    RN_CHECK(cam[0] == 110 && cam[1] == -480 && cam[2] == 3030, "world2cam");
    rn_cam2pixel(px, cam, f, c); /* 110 / 3030 * 1000 + 500, -480 / 3030 * 1000 + 500 */
    RN_CHECK(near(px[0], 536.30363036, 1e-9) && near(px[1], 341.58415842, 1e-9) && px[2] == 3030, "cam2pixel");
}

static void write_muco(const char *dd, const char *ann0_bbox)
{
    char a[512], b[512], c[512], d[512], ia[256], ib[256], ic[256];
    wfile(dd, "MuCo/data/MuCo-3DHP.json",
          "{\"images\": [{\"id\": 1, \"file_name\": \"a/1.jpg\", \"width\": 640, \"height\": 480, \"f\": [1000, 1000], "
          "\"c\": [320, 240]},\n {\"id\": 2, \"file_name\": \"a/2.jpg\", \"width\": 640, \"height\": 480, \"f\": [1000, "
          "1000], \"c\": [320, 240]}],\n \"annotations\": [\n"
          "{\"id\": 10, \"image_id\": 1, \"bbox\": %s, \"keypoints_cam\": %s, \"keypoints_img\": %s, \"keypoints_vis\": "
          "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,true]},\n"
          "{\"id\": 11, \"image_id\": 1, \"bbox\": [200, 100, 50, 100], \"keypoints_cam\": %s, \"keypoints_img\": %s, "
          "\"keypoints_vis\": [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]},\n"
          "{\"id\": 12, \"image_id\": 1, \"bbox\": [400.0, 100.5, 50.0, 100.0], \"keypoints_cam\": %s, "
          "\"keypoints_img\": %s, \"keypoints_vis\": [1,1,1,1,1,1,1,1,1,1,1,1,1,1,[0]]},\n"
          "{\"id\": 13, \"image_id\": 2, \"bbox\": [10, 10, 40, 80], \"keypoints_cam\": %s, \"keypoints_img\": %s, "
          "\"keypoints_vis\": [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]},\n"
          "{\"id\": 14, \"image_id\": 99, \"bbox\": [10, 10, 40, 80], \"keypoints_cam\": %s, \"keypoints_img\": %s, "
          "\"keypoints_vis\": [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]}]}\n",
          ann0_bbox, rows(a, sizeof a, 3, 0, 0, 3000), rows(ia, sizeof ia, 2, 320, 240, 0),
          rows(b, sizeof b, 3, 300, 0, 3200), rows(ib, sizeof ib, 2, 420, 240, 0),
          rows(c, sizeof c, 3, 2000, 0, 4000), rows(ic, sizeof ic, 2, 987.5, 240, 0),
          rows(d, sizeof d, 3, 0, 0, 8000), rows(ia, sizeof ia, 2, 320, 240, 0), rows(d, sizeof d, 3, 0, 0, 3000),
          rows(ib, sizeof ib, 2, 320, 240, 0));
}

static void test_muco(void)
{
    char dd[512];
    new_dir(dd, sizeof dd, "muco");
    write_muco(dd, "[100, 100, 50, 100]");
    rn_dataset ds;
    rn_err err = {{0}};
    int rc = rn_dataset_load(&ds, "MuCo", dd, RN_SPLIT_TRAIN, &NOCACHE, &err);
    RN_CHECK(rc == 0, "muco load: %s", err.msg);
    if (rc) return;
    /* image 1: ann 10 closest (3000); ann 11 is 300 mm from it (dropped); ann 12 kept.
     * image 2: ann 13 at 8000 mm, outside 1500..7500. ann 14's image does not exist. */
    RN_CHECK(ds.n == 2, "muco records %zu", ds.n);
    if (ds.n == 2) {
        const rn_sample *s = &ds.samples[0], *t = &ds.samples[1];
        RN_CHECK(s->ann_id == 10 && t->ann_id == 12, "order %d %d", s->ann_id, t->ann_id);
        /* integer box: clip (100, 100, 49, 99) -> w 99 -> int sizes 123, x trunc(124.5 - 61.5) = 63, y 88 */
        RN_CHECK(s->bbox[0] == 63 && s->bbox[1] == 88 && s->bbox[2] == 123 && s->bbox[3] == 123, "int box %g %g %g %g",
                 s->bbox[0], s->bbox[1], s->bbox[2], s->bbox[3]);
        RN_CHECK(s->area == 15129 && near(s->k, 2e6 / 123, 1e-6), "k %g", s->k);
        /* float box: clip (400, 100.5, 49, 99) -> centre (424.5, 150), 123.75 square */
        RN_CHECK(near(t->bbox[0], 362.625, 1e-6) && near(t->bbox[1], 88.125, 1e-6) && near(t->bbox[2], 123.75, 1e-6),
                 "float box %g %g %g", t->bbox[0], t->bbox[1], t->bbox[2]);
        RN_CHECK(near(t->k, 2e6 / 123.75, 1e-6), "k2 %g", t->k);
        RN_CHECK(t->root_img[0] == 987.5f && t->root_img[1] == 240 && t->root_img[2] == 4000, "root_img");
        RN_CHECK(t->root_cam[0] == 2000 && t->root_cam[2] == 4000 && t->root_vis == 0 && s->root_vis == 1, "root");
        RN_CHECK(t->f[0] == 1000 && t->c[0] == 320 && t->have_depth == 1 && t->image_id == 1, "camera");
        char buf[1024];
        char want[1024];
        snprintf(want, sizeof want, "%s/MuCo/data/a/1.jpg", dd);
        RN_CHECK(!strcmp(rn_dataset_image_path(&ds, s, buf, sizeof buf), want), "path %s", buf);
    }
    rn_dataset_free(&ds);
}

static void write_mupots(const char *dd)
{
    char kc[512], ki[256];
    rows_n(kc, sizeof kc, 17, 3, 100, 200, 5000);
    rows_n(ki, sizeof ki, 17, 2, 1030, 560, 0);
    wfile(dd, "MuPoTS/data/MuPoTS-3D.json",
          "{\"images\": [{\"id\": 1, \"file_name\": \"TS3/img_000001.jpg\", \"width\": 2048, \"height\": 1080, "
          "\"intrinsic\": [1500, 1500, 1000, 500]}], \"annotations\": ["
          "{\"id\": 1, \"image_id\": 1, \"is_valid\": 0, \"bbox\": [1, 1, 5, 5], \"keypoints_cam\": %s, "
          "\"keypoints_img\": %s, \"keypoints_vis\": %s},"
          "{\"id\": 2, \"image_id\": 1, \"is_valid\": 1, \"bbox\": [500.0, 300.0, 200.0, 400.0], \"keypoints_cam\": %s, "
          "\"keypoints_img\": %s, \"keypoints_vis\": %s}]}",
          kc, ki, "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]", kc, ki, "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]");
    wfile(dd, "MuPoTS/bbox/bbox_mupots_output.json",
          "[{\"image_id\": 1, \"bbox\": [500.0, 300.0, 200.0, 400.0], \"score\": 0.25},"
          " {\"image_id\": 1, \"bbox\": [0, 0, 0, 0], \"score\": 0.9}]");
}

static void test_mupots(void)
{
    char dd[512];
    new_dir(dd, sizeof dd, "mupots");
    write_mupots(dd);
    rn_dataset ds;
    rn_err err = {{0}};
    int rc = rn_dataset_load(&ds, "MuPoTS", dd, RN_SPLIT_TEST, &NOCACHE, &err);
    RN_CHECK(rc == 0 && ds.n == 1, "mupots gt: %s n=%zu", err.msg, rc ? 0 : ds.n);
    if (rc == 0 && ds.n == 1) {
        const rn_sample *s = &ds.samples[0];
        /* clip (500, 300, 199, 399) -> centre (599.5, 499.5), 399 * 1.25 = 498.75 square */
        RN_CHECK(near(s->bbox[0], 350.125, 1e-6) && near(s->bbox[1], 250.125, 1e-6) && near(s->bbox[2], 498.75, 1e-6),
                 "box %g %g %g", s->bbox[0], s->bbox[1], s->bbox[2]);
        RN_CHECK(near(s->k, 2000.0 * 1500 / 498.75, 1e-6) && s->subject == 3 && s->ann_id == 2 && s->score == 1,
                 "k %g subject %d", s->k, s->subject);
        RN_CHECK(s->root_img[0] == 1030 && s->root_img[2] == 5000 && s->c[1] == 500, "root");
    }
    if (rc == 0) rn_dataset_free(&ds);
    rn_dataset_opts det = NOCACHE;
    det.use_det_bbox = 1;
    rc = rn_dataset_load(&ds, "MuPoTS", dd, RN_SPLIT_TEST, &det, &err);
    /* the empty detector box is dropped; the kept one has the detector's score and dummy roots */
    RN_CHECK(rc == 0 && ds.n == 1, "mupots det: %s", err.msg);
    if (rc == 0 && ds.n == 1)
        RN_CHECK(ds.samples[0].score == 0.25f && ds.samples[0].root_cam[2] == 1 && near(ds.samples[0].bbox[2], 498.75, 1e-6),
                 "det record");
    if (rc == 0) rn_dataset_free(&ds);
}

/* The 16 joints after the root of a Human3.6M frame (17 in all). */
#define H36M_ZERO_ROWS ",[0,0,0],[0,0,0],[0,0,0],[0,0,0],[0,0,0],[0,0,0],[0,0,0],[0,0,0],[0,0,0],[0,0,0],[0,0,0],[0,0,0],[0,0,0],[0,0,0],[0,0,0],[0,0,0]"

/* Subject files with one camera (R maps world z-up to camera y-down) and frames. */
static void write_h36m_subject(const char *dd, int subj, const int *frames, int nf)
{
    char rel[256], imgs[4096] = "", anns[4096] = "", joints[16384] = "";
    size_t ai = 0, an = 0, aj = 0;
    for (int i = 0; i < nf; i++) {
        int id = subj * 100 + i;
        ai += (size_t)snprintf(imgs + ai, sizeof imgs - ai,
                               "%s{\"id\": %d, \"file_name\": \"s_%02d_act_02_subact_01_ca_01/x_%06d.jpg\", \"width\": 1000, "
                               "\"height\": 1000, \"subject\": %d, \"action_idx\": 2, \"subaction_idx\": 1, "
                               "\"frame_idx\": %d, \"cam_idx\": 1}",
                               i ? "," : "", id, subj, frames[i] + 1, subj, frames[i]);
        an += (size_t)snprintf(anns + an, sizeof anns - an,
                               "%s{\"id\": %d, \"image_id\": %d, \"bbox\": [400.0, 300.0, 200.0, 400.0], "
                               "\"keypoints_vis\": [[1]]}",
                               i ? "," : "", id, id);
        aj += (size_t)snprintf(joints + aj, sizeof joints - aj, "%s\"%d\": [[%d, 3000, 500]%s]", i ? "," : "",
                               frames[i], 100 + frames[i], H36M_ZERO_ROWS);
    }
    snprintf(rel, sizeof rel, "Human36M/annotations/Human36M_subject%d_data.json", subj);
    wfile(dd, rel, "{\"images\": [%s], \"annotations\": [%s]}", imgs, anns);
    snprintf(rel, sizeof rel, "Human36M/annotations/Human36M_subject%d_camera.json", subj);
    wfile(dd, rel,
          "{\"1\": {\"R\": [[1, 0, 0], [0, 0, -1], [0, 1, 0]], \"t\": [[10], [20], [30]], \"f\": [1000, 1000], "
          "\"c\": [500, 500]}}");
    snprintf(rel, sizeof rel, "Human36M/annotations/Human36M_subject%d_joint_3d.json", subj);
    wfile(dd, rel, "{\"2\": {\"1\": {%s}}}", joints);
}

static void test_h36m(void)
{
    char dd[512];
    new_dir(dd, sizeof dd, "h36m");
    static const int train_subj[] = {1, 5, 6, 7, 8};
    int frames[] = {0, 5, 7, 64, 320};
    for (int i = 0; i < 5; i++) write_h36m_subject(dd, train_subj[i], frames, 5);
    write_h36m_subject(dd, 11, frames, 5);
    rn_dataset ds;
    rn_err err = {{0}};
    /* train protocol 2: subjects 1, 5, 6, 7, 8, frames % 5 == 0: 0, 5, 320 */
    int rc = rn_dataset_load(&ds, "Human36M", dd, RN_SPLIT_TRAIN, &NOCACHE, &err);
    RN_CHECK(rc == 0 && ds.n == 15, "h36m train: %s n=%zu", err.msg, rc ? 0 : ds.n);
    if (rc == 0 && ds.n == 15) {
        const rn_sample *s = &ds.samples[0];
        /* world (100, 3000, 500) -> camera (110, -480, 3030) -> pixel (536.3036, 341.5842) */
        RN_CHECK(s->root_cam[0] == 110 && s->root_cam[1] == -480 && s->root_cam[2] == 3030, "root_cam");
        RN_CHECK(near(s->root_img[0], 536.30363, 1e-6) && near(s->root_img[1], 341.58416, 1e-6), "root_img %g %g",
                 s->root_img[0], s->root_img[1]);
        RN_CHECK(s->subject == 1 && s->action == 2 && ds.samples[1].root_cam[0] == 115 && ds.samples[14].subject == 8,
                 "order/subject");
    }
    if (rc == 0) rn_dataset_free(&ds);
    /* test protocol 2 needs subject 9: a clear missing-file error */
    rc = rn_dataset_load(&ds, "Human36M", dd, RN_SPLIT_TEST, &NOCACHE, &err);
    RN_CHECK(rc == -1 && strstr(err.msg, "Human36M_subject9_data.json: cannot open"), "missing: %s", err.msg);
    /* test protocol 1: subject 11, frames % 64 == 0: 0, 64, 320; detector boxes replace GT */
    rn_dataset_opts o = NOCACHE;
    o.protocol = 1;
    o.use_det_bbox = 1;
    wfile(dd, "Human36M/bbox/bbox_human36m_output.json",
          "[{\"image_id\": 1100, \"bbox\": [0, 0, 1, 1]}, {\"image_id\": 1100, \"bbox\": [100.0, 100.0, 80.0, 80.0]},"
          " {\"image_id\": 1103, \"bbox\": [100.0, 100.0, 80.0, 80.0]}]");
    rc = rn_dataset_load(&ds, "Human36M", dd, RN_SPLIT_TEST, &o, &err);
    RN_CHECK(rc == -1 && strstr(err.msg, "image_id 1104") && strstr(err.msg, "no detector box"), "det missing: %s",
             err.msg);
    wfile(dd, "Human36M/bbox/bbox_human36m_output.json",
          "[{\"image_id\": 1100, \"bbox\": [0, 0, 1, 1]}, {\"image_id\": 1100, \"bbox\": [100.0, 100.0, 80.0, 80.0]},"
          " {\"image_id\": 1103, \"bbox\": [100.0, 100.0, 80.0, 80.0]}, {\"image_id\": 1104, \"bbox\": [0, 0, 0, 0]}]");
    rc = rn_dataset_load(&ds, "Human36M", dd, RN_SPLIT_TEST, &o, &err);
    /* 1100 (last entry wins: 80 x 80 -> clip 79 -> 98.75), 1103; 1104's empty box dropped */
    RN_CHECK(rc == 0 && ds.n == 2, "h36m det: %s", err.msg);
    if (rc == 0 && ds.n == 2)
        RN_CHECK(near(ds.samples[0].bbox[2], 98.75, 1e-6) && ds.samples[1].image_id == 1103, "det box %g",
                 ds.samples[0].bbox[2]);
    if (rc == 0) rn_dataset_free(&ds);
}

static void test_2d_and_pw3d(void)
{
    char dd[512];
    new_dir(dd, sizeof dd, "twod");
    const char *kp17 = "[0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, "
                       "100,200,2, 120,210,%d, 0,0,0, 0,0,0, 0,0,0, 0,0,0]";
    char k1[512], k0[512];
    snprintf(k1, sizeof k1, kp17, 1);
    snprintf(k0, sizeof k0, kp17, 0);
    wfile(dd, "MSCOCO/annotations/person_keypoints_train2017.json",
          "{\"images\": [{\"id\": 7, \"file_name\": \"7.jpg\", \"width\": 640, \"height\": 480}], \"annotations\": ["
          "{\"id\": 1, \"image_id\": 7, \"iscrowd\": 1, \"num_keypoints\": 5, \"area\": 10, \"bbox\": [10, 10, 50, 50], \"keypoints\": %s},"
          "{\"id\": 2, \"image_id\": 7, \"iscrowd\": 0, \"num_keypoints\": 0, \"area\": 10, \"bbox\": [10, 10, 50, 50], \"keypoints\": %s},"
          "{\"id\": 3, \"image_id\": 8, \"iscrowd\": 0, \"num_keypoints\": 5, \"area\": 10, \"bbox\": [10, 10, 50, 50], \"keypoints\": %s},"
          "{\"id\": 4, \"image_id\": 7, \"iscrowd\": 0, \"num_keypoints\": 5, \"area\": 0, \"bbox\": [10, 10, 50, 50], \"keypoints\": %s},"
          "{\"id\": 5, \"image_id\": 7, \"iscrowd\": 0, \"num_keypoints\": 5, \"area\": 9, \"bbox\": [10.0, 10.0, 50.0, 50.0], \"keypoints\": %s},"
          "{\"id\": 6, \"image_id\": 7, \"iscrowd\": 0, \"num_keypoints\": 5, \"area\": 9, \"bbox\": [10.0, 10.0, 50.0, 50.0], \"keypoints\": %s}]}",
          k1, k1, k1, k1, k1, k0);
    rn_dataset ds;
    rn_err err = {{0}};
    int rc = rn_dataset_load(&ds, "MSCOCO", dd, RN_SPLIT_TRAIN, &NOCACHE, &err);
    /* crowd, no keypoints, unknown image and area 0 are skipped; pelvis = hip mean (110, 205) */
    RN_CHECK(rc == 0 && ds.n == 2, "coco: %s", err.msg);
    if (rc == 0 && ds.n == 2) {
        const rn_sample *s = &ds.samples[0];
        RN_CHECK(s->ann_id == 5 && s->root_img[0] == 110 && s->root_img[1] == 205 && s->root_vis == 1, "coco root");
        RN_CHECK(ds.samples[1].root_vis == 0 && s->have_depth == 0 && s->f[0] == 1500 && s->c[0] == 320, "coco vis/f");
        /* clip 49 x 49 -> 61.25 square; k = 2000 * 1500 / 61.25 */
        RN_CHECK(near(s->bbox[2], 61.25, 1e-6) && near(s->k, 2000.0 * 1500 / 61.25, 1e-6), "coco k %g", s->k);
        char buf[1024];
        RN_CHECK(strstr(rn_dataset_image_path(&ds, s, buf, sizeof buf), "MSCOCO/images/train2017/7.jpg") != NULL,
                 "coco path %s", buf);
        /* joints: 19 (Thorax 17, Pelvis 18 added); the pelvis is the hips' mean with vis 2 * 1 > 0, record 1's
         * 2 * 0 = 0; the shoulders are unlabelled: the thorax (0, 0) with vis 0 */
        const float *j0 = rn_dataset_joints(&ds, 0), *j1 = rn_dataset_joints(&ds, 1);
        RN_CHECK(ds.J == 19 && !strcmp(ds.skeleton, "MSCOCO") && j0[18 * RN_JOINT_F] == 110 &&
                     j0[18 * RN_JOINT_F + 1] == 205 && j0[18 * RN_JOINT_F + RN_JOINT_VIS] == 1 &&
                     j1[18 * RN_JOINT_F + RN_JOINT_VIS] == 0 && j0[17 * RN_JOINT_F + RN_JOINT_VIS] == 0 &&
                     j0[12 * RN_JOINT_F] == 120 && j0[12 * RN_JOINT_F + RN_JOINT_VIS] == 1 &&
                     j1[12 * RN_JOINT_F + RN_JOINT_VIS] == 0 && j0[12 * RN_JOINT_F + RN_JOINT_IMG + 2] == 0,
                 "coco joints (J %d)", ds.J);
    }
    if (rc == 0) rn_dataset_free(&ds);
    wfile(dd, "MPII/annotations/train.json",
          "{\"images\": [{\"id\": 3, \"file_name\": \"images/3.jpg\", \"width\": 640, \"height\": 480}], \"annotations\": ["
          "{\"id\": 1, \"image_id\": 3, \"num_keypoints\": 0, \"bbox\": [10, 10, 50, 50], \"keypoints\": []},"
          "{\"id\": 2, \"image_id\": 3, \"num_keypoints\": 16, \"bbox\": [10.0, 10.0, 50.0, 50.0], \"keypoints\": "
          "[0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 33,44,1, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0]}]}");
    rc = rn_dataset_load(&ds, "MPII", dd, RN_SPLIT_TRAIN, &NOCACHE, &err);
    RN_CHECK(rc == 0 && ds.n == 1 && ds.samples[0].root_img[0] == 33 && ds.samples[0].root_img[1] == 44,
             "mpii: %s", err.msg);
    if (rc == 0 && ds.n == 1)
        RN_CHECK(ds.J == 16 && !strcmp(ds.skeleton, "MPII") && ds.joints[6 * RN_JOINT_F + 1] == 44 &&
                     ds.joints[6 * RN_JOINT_F + RN_JOINT_VIS] == 1 && ds.joints[5 * RN_JOINT_F + RN_JOINT_VIS] == 0,
                 "mpii joints (J %d)", ds.J);
    if (rc == 0) rn_dataset_free(&ds);
    wfile(dd, "PW3D/data/3DPW_test.json",
          "{\"images\": [{\"id\": 4, \"file_name\": \"image_00001.jpg\", \"sequence\": \"downtown\", \"width\": 1080, "
          "\"height\": 1920, \"cam_param\": {\"focal\": [1000, 1000], \"princpt\": [500, 400]}}], \"annotations\": ["
          "{\"id\": 9, \"image_id\": 4, \"bbox\": [400.0, 300.0, 200.0, 400.0], \"joint_cam\": [0.5, 0.2, 4.0, 0, 0, 1]}]}");
    rc = rn_dataset_load(&ds, "PW3D", dd, RN_SPLIT_TEST, &NOCACHE, &err);
    RN_CHECK(rc == 0 && ds.n == 1, "pw3d: %s", err.msg);
    if (rc == 0 && ds.n == 1) {
        const rn_sample *s = &ds.samples[0];
        /* (0.5, 0.2, 4) m -> (0.5 / 4 * 1000 + 500, 0.2 / 4 * 1000 + 400) = (625, 450); bbox_real (2, 2) m */
        RN_CHECK(near(s->root_img[0], 625, 1e-6) && near(s->root_img[1], 450, 1e-6) && s->root_vis == 1, "pw3d root");
        RN_CHECK(ds.bbox_real[0] == 2 && near(s->k, 2.0 * 1000 / 498.75, 1e-6), "pw3d k %g", s->k);
        RN_CHECK(ds.J == 0 && ds.joints == NULL && ds.skeleton[0] == 0 && rn_dataset_joints(&ds, 0) == NULL,
                 "pw3d has no joints");
        char buf[1024];
        RN_CHECK(strstr(rn_dataset_image_path(&ds, s, buf, sizeof buf), "PW3D/data/imageFiles/downtown/image_00001.jpg") != NULL,
                 "pw3d path");
    }
    if (rc == 0) rn_dataset_free(&ds);
}

/* One malformed MuCo file: the load fails with a message naming the file and `want`. */
static void expect_muco_error(const char *dd, const char *json, const char *want)
{
    wfile(dd, "MuCo/data/MuCo-3DHP.json", "%s", json);
    rn_dataset ds;
    rn_err err = {{0}};
    int rc = rn_dataset_load(&ds, "MuCo", dd, RN_SPLIT_TRAIN, &NOCACHE, &err);
    RN_CHECK(rc == -1 && strstr(err.msg, want) && strstr(err.msg, "MuCo-3DHP.json"), "want '%s', got rc %d '%s'",
             want, rc, err.msg);
    if (rc == 0) rn_dataset_free(&ds);
}

static void test_malformed(void)
{
    char dd[512], kc[512], ki[256], json[4096];
    new_dir(dd, sizeof dd, "bad");
    rows(kc, sizeof kc, 3, 0, 0, 3000);
    rows(ki, sizeof ki, 2, 320, 240, 0);
    const char *img = "{\"id\": 1, \"file_name\": \"a.jpg\", \"width\": 640, \"height\": 480, \"f\": %s, \"c\": [320, 240]}";
    char img_ok[512], img_f0[512];
    snprintf(img_ok, sizeof img_ok, img, "[1000, 1000]");
    snprintf(img_f0, sizeof img_f0, img, "[0, 1000]");
#define ANN(box) "{\"id\": 10, \"image_id\": 1, " box "\"keypoints_cam\": %s, \"keypoints_img\": %s, \"keypoints_vis\": [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]}"
    snprintf(json, sizeof json, "{\"images\": [%s], \"annotations\": [" ANN("") "]}", img_ok, kc, ki);
    expect_muco_error(dd, json, "annotation 0 (image_id 1, ann id 10): field 'bbox': missing");
    char kc15[512];
    rows_n(kc15, sizeof kc15, 15, 3, 0, 0, 3000);
    snprintf(json, sizeof json, "{\"images\": [%s], \"annotations\": [" ANN("\"bbox\": [1, 2, 30, 40], ") "]}", img_ok,
             kc15, ki);
    expect_muco_error(dd, json, "annotation 0 (image_id 1, ann id 10): field 'keypoints_cam': has 15 joints, expected 21");
    snprintf(json, sizeof json, "{\"images\": [%s], \"annotations\": [" ANN("\"bbox\": [1, \"x\", 3, 4], ") "]}", img_ok, kc, ki);
    expect_muco_error(dd, json, "field 'bbox': not a number");
    snprintf(json, sizeof json, "{\"images\": [%s], \"annotations\": [" ANN("\"bbox\": [1, 2, -3, 4], ") "]}", img_ok, kc, ki);
    expect_muco_error(dd, json, "field 'bbox': negative size");
    snprintf(json, sizeof json, "{\"images\": [%s], \"annotations\": [" ANN("\"bbox\": [1, 2, 3], ") "]}", img_ok, kc, ki);
    expect_muco_error(dd, json, "field 'bbox': has 3 values, expected 4");
    snprintf(json, sizeof json, "{\"images\": [%s], \"annotations\": [" ANN("\"bbox\": [1, 2, NaN, 4], ") "]}", img_ok, kc, ki);
    expect_muco_error(dd, json, "annotation 0 (image_id 1, ann id 10): field 'bbox': NaN");
    snprintf(json, sizeof json, "{\"images\": [%s], \"annotations\": [" ANN("\"bbox\": [1, 2, 3, 4], ") "]}", img_f0, kc, ki);
    expect_muco_error(dd, json, "image 0 (image_id 1): field 'f': focal length must be > 0");
    snprintf(json, sizeof json, "{\"images\": [%s], \"annotations\": [" ANN("\"bbox\": [1, 2, 3, 4], ") "]}", img_ok,
             "[[0,0,3000]]", ki);
    expect_muco_error(dd, json, "field 'keypoints_cam': has 1 rows, expected at least 15");
    snprintf(json, sizeof json, "{\"images\": [%s, %s], \"annotations\": []}", img_ok, img_ok);
    expect_muco_error(dd, json, "field 'id': duplicate image id 1");
    expect_muco_error(dd, "{\"images\": [{\"id\": 1, \"file_name\": \"a.jpg\", \"width\": 0, \"height\": 480, "
                          "\"f\": [1, 1], \"c\": [1, 1]}], \"annotations\": [{\"image_id\": 1}]}",
                      "field 'width': bad image size");
    expect_muco_error(dd, "{\"images\": [], \"annotations\": [", "MuCo-3DHP.json:1:");
    expect_muco_error(dd, "[1, 2]", "not a JSON object");
    expect_muco_error(dd, "{\"annotations\": []}", "field 'images': missing");
    expect_muco_error(dd, "", "empty or unreadable file");
    /* an empty box is the authors' filter, not an error */
    snprintf(json, sizeof json, "{\"images\": [%s], \"annotations\": [" ANN("\"bbox\": [1, 2, 0, 4], ") "]}", img_ok, kc, ki);
    wfile(dd, "MuCo/data/MuCo-3DHP.json", "%s", json);
    rn_dataset ds;
    rn_err err = {{0}};
    int rc = rn_dataset_load(&ds, "MuCo", dd, RN_SPLIT_TRAIN, &NOCACHE, &err);
    RN_CHECK(rc == 0 && ds.n == 0, "empty box dropped: %s", err.msg);
    if (rc == 0) rn_dataset_free(&ds);
    char mp[512];
    new_dir(mp, sizeof mp, "badmupots");
    write_mupots(mp);
    wfile(mp, "MuPoTS/data/MuPoTS-3D.json",
          "{\"images\": [], \"annotations\": [{\"id\": 2, \"image_id\": 5, \"is_valid\": 1, \"bbox\": [1, 1, 5, 5]}]}");
    rc = rn_dataset_load(&ds, "MuPoTS", mp, RN_SPLIT_TEST, &NOCACHE, &err);
    RN_CHECK(rc == -1 && strstr(err.msg, "annotation 0 (image_id 5, ann id 2): field 'image_id': image 5 is not in"),
             "mupots unknown image: %s", err.msg);
    RN_CHECK(rn_dataset_load(&ds, "Nope", mp, RN_SPLIT_TEST, &NOCACHE, &err) == -1 && strstr(err.msg, "unknown dataset"),
             "unknown set");
#undef ANN
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/rn_readers_XXXXXX", tmp ? tmp : "/tmp");
    RN_CHECK(mkdtemp(g_dir) != NULL, "mkdtemp");
    test_bbox();
    test_muco();
    test_mupots();
    test_h36m();
    test_2d_and_pw3d();
    test_malformed();
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    RN_CHECK(system(cmd) == 0, "cleanup");
    RN_CHECK_DONE();
}
