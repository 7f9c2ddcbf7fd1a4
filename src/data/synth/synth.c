/* Synthetic datasets in the MuCo-3DHP, MuPoTS-3D, Human3.6M, MS COCO and MPII layouts. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/rng.h"
#include "data/sets/readers.h"
#include "data/synth/synth.h"
#include "io/file.h"

enum { MUPOTS_JOINTS = 17, H36M_JOINTS = 17, H36M_N_SUBJ = 7, H36M_FRAME_STEP = 320 };
/* Human3.6M joint k is synthetic (MuCo-order) joint H36M_FROM_MU[k]. */
static const int H36M_FROM_MU[H36M_JOINTS] = {14, 8, 9, 10, 11, 12, 13, 15, 1, 16, 0, 5, 6, 7, 2, 3, 4};
static const int H36M_SUBJ[H36M_N_SUBJ] = {1, 5, 6, 7, 8, 9, 11};
/* COCO keypoint k is synthetic joint COCO_FROM_MU[k]; -1: the figure has none (nose, eyes, ears:
 * written unlabelled, v 0). */
enum { COCO_KP = 17, MPII_KP = 16, MPII_NECK = 8 };
static const int COCO_FROM_MU[COCO_KP] = {-1, -1, -1, -1, -1, 5, 2, 6, 3, 7, 4, 11, 8, 12, 9, 13, 10};
/* MPII joint k is synthetic joint MPII_FROM_MU[k]; the neck (-1) is the mean of Thorax and Head. */
static const int MPII_FROM_MU[MPII_KP] = {10, 9, 8, 11, 12, 13, 14, 1, -1, 0, 4, 3, 2, 5, 6, 7};
enum { MU_THORAX = 1, MU_HEAD = 16 };

int rn_synth_parse_format(const char *s, rn_synth_format *out)
{
    if (!strcmp(s, "muco")) *out = RN_SYNTH_MUCO;
    else if (!strcmp(s, "mupots")) *out = RN_SYNTH_MUPOTS;
    else if (!strcmp(s, "h36m")) *out = RN_SYNTH_H36M;
    else if (!strcmp(s, "coco")) *out = RN_SYNTH_COCO;
    else if (!strcmp(s, "mpii")) *out = RN_SYNTH_MPII;
    else return -1;
    return 0;
}

/* ---- a growable text buffer ---- */
typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

__attribute__((format(printf, 2, 3))) static void sb_printf(sbuf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        RN_ASSERT(k >= 0);
        if (b->p && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 1 << 16;
        while (cap < b->n + (size_t)k + 1) cap *= 2;
        char *q = realloc(b->p, cap);
        RN_ASSERT(q);
        b->p = q;
        b->cap = cap;
    }
}

static int sb_write(const sbuf *b, const char *path, rn_err *err)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) return rn_err_set(err, "%s: cannot create: %s", tmp, strerror(errno));
    int bad = fwrite(b->p, 1, b->n, f) != b->n;
    bad |= fflush(f) != 0 || fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path)) {
        unlink(tmp);
        return rn_err_set(err, "%s: cannot write", path);
    }
    return 0;
}

/* ---- per-image cameras ---- */
static double uni(rn_rng *r, double a, double b) { return a + (b - a) * rn_rng_uniform(r); }

static void random_camera(rn_synth_image *im, rn_rng *r, int w, int h)
{
    im->width = w;
    im->height = h;
    double f = 1.1 * (w > h ? w : h) * uni(r, 0.92, 1.08);
    im->f[0] = f;
    im->f[1] = f * uni(r, 0.99, 1.01);
    im->c[0] = w / 2.0 + uni(r, -8, 8);
    im->c[1] = h / 2.0 + uni(r, -8, 8);
    im->cam_height_mm = RN_SYNTH_CAMERA_HEIGHT_MM;
}

/* A Human3.6M camera: world z up; R rows are the camera's right, down, forward. */
typedef struct h36m_cam {
    double R[9], t[3];
    rn_synth_image im; /* f, c, size, height */
} h36m_cam;

static void h36m_camera(h36m_cam *c, uint64_t seed, int subject, int cam, int w, int h)
{
    rn_rng r;
    rn_rng_seed2(&r, seed ^ 0xcafeULL, (uint64_t)(subject * 10 + cam));
    random_camera(&c->im, &r, w, h);
    double th = uni(&r, -M_PI, M_PI), ct = cos(th), st = sin(th);
    double R[9] = {st, -ct, 0, 0, 0, -1, ct, st, 0};
    double C[3] = {-4500 * ct, -4500 * st, c->im.cam_height_mm};
    memcpy(c->R, R, sizeof R);
    for (int i = 0; i < 3; i++) c->t[i] = -(R[3 * i] * C[0] + R[3 * i + 1] * C[1] + R[3 * i + 2] * C[2]);
}

/* world = R^T (cam - t) */
static void cam_to_world(double w[3], const double cam[3], const h36m_cam *c)
{
    double d[3] = {cam[0] - c->t[0], cam[1] - c->t[1], cam[2] - c->t[2]};
    for (int i = 0; i < 3; i++) w[i] = c->R[i] * d[0] + c->R[3 + i] * d[1] + c->R[6 + i] * d[2];
}

/* Image i's scene for the format (camera, people). */
typedef struct h36m_ref {
    int subject, cam, action, subaction;
    long frame;
} h36m_ref;

static h36m_ref h36m_of(long i)
{
    long k = i / H36M_N_SUBJ;
    h36m_ref r = {H36M_SUBJ[i % H36M_N_SUBJ], (int)(k % 4) + 1, 2 + (int)((k / 4) % 15), 1 + (int)((k / 60) % 2),
                  k * H36M_FRAME_STEP};
    return r;
}

static void make_scene(rn_synth_image *im, const rn_synth_opts *o, long i)
{
    int w = o->width > 0 ? o->width : 512, h = o->height > 0 ? o->height : 512;
    if (o->format == RN_SYNTH_H36M) {
        h36m_ref ref = h36m_of(i);
        h36m_cam c;
        h36m_camera(&c, o->seed, ref.subject, ref.cam, w, h);
        *im = c.im;
        rn_synth_scene(im, o->seed, i, 1);
        return;
    }
    rn_rng r;
    rn_rng_seed2(&r, o->seed ^ 0xbeefULL, (uint64_t)i);
    random_camera(im, &r, w, h);
    rn_synth_scene(im, o->seed, i, 1 + (int)rn_rng_below(&r, 3));
}

static void image_name(char *buf, size_t n, const rn_synth_opts *o, long i)
{
    if (o->format == RN_SYNTH_MUCO) snprintf(buf, n, "unaugmented_set/%06ld.jpg", i);
    else if (o->format == RN_SYNTH_MUPOTS) snprintf(buf, n, "TS%ld/img_%06ld.jpg", 1 + i % 20, i / 20);
    else if (o->format == RN_SYNTH_COCO) snprintf(buf, n, "%012ld.jpg", i + 1);
    else if (o->format == RN_SYNTH_MPII) snprintf(buf, n, "images/%09ld.jpg", i + 1);
    else {
        h36m_ref r = h36m_of(i);
        snprintf(buf, n, "s_%02d_act_%02d_subact_%02d_ca_%02d/s_%02d_act_%02d_subact_%02d_ca_%02d_%06ld.jpg",
                 r.subject, r.action, r.subaction, r.cam, r.subject, r.action, r.subaction, r.cam, r.frame + 1);
    }
}

/* The set whose layout a format writes (data/sets/descriptor.h: its annotation files). */
static const rn_set_desc *format_set(const rn_synth_opts *o)
{
    static const char *const SET[] = {"MuCo", "MuPoTS", "Human36M", "MSCOCO", "MPII"};
    return rn_set_find(SET[o->format]);
}

/* Writes b at out/rel, making rel's folder. */
static int write_at(const char *out, const char *rel, const sbuf *b, rn_err *err)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/%s", out, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    int rc = rn_mkdirs(path, err);
    *slash = '/';
    return rc || sb_write(b, path, err) ? -1 : 0;
}

static const char *image_root(const rn_synth_opts *o)
{
    static const char *R[] = {"MuCo/data", "MuPoTS/data/MultiPersonTestSet", "Human36M/images",
                              "MSCOCO/images/train2017", "MPII"};
    return R[o->format];
}

/* ---- JSON ---- */
static void json_box(sbuf *b, const double *box)
{
    sb_printf(b, "[%.3f, %.3f, %.3f, %.3f]", box[0], box[1], box[2], box[3]);
}

static void json_mu_ann(sbuf *b, const rn_synth_person *p, long aid, long iid, int nj, int with_valid)
{
    sb_printf(b, "%s{\"id\": %ld, \"image_id\": %ld, \"bbox\": ", aid ? ", " : "", aid, iid);
    json_box(b, p->bbox);
    sb_printf(b, ", \"area\": %.3f, \"iscrowd\": 0, \"keypoints_cam\": [", p->bbox[2] * p->bbox[3]);
    for (int k = 0; k < nj; k++)
        sb_printf(b, "%s[%.4f, %.4f, %.4f]", k ? ", " : "", p->cam[k][0], p->cam[k][1], p->cam[k][2]);
    sb_printf(b, "], \"keypoints_img\": [");
    for (int k = 0; k < nj; k++) sb_printf(b, "%s[%.4f, %.4f]", k ? ", " : "", p->img[k][0], p->img[k][1]);
    sb_printf(b, "], \"keypoints_vis\": [");
    for (int k = 0; k < nj; k++) sb_printf(b, "%s%s", k ? ", " : "", p->vis[k] ? "true" : "false");
    sb_printf(b, "]");
    if (with_valid) sb_printf(b, ", \"is_valid\": %d", p->vis[RN_SYNTH_ROOT]);
    sb_printf(b, "}");
}

/* Jittered copy of a GT box with a score, as a detector would give. */
static void json_det(sbuf *b, const rn_synth_person *p, long iid, int first, int with_score, rn_rng *r)
{
    double box[4] = {p->bbox[0] + 0.03 * p->bbox[2] * (2 * rn_rng_uniform(r) - 1),
                     p->bbox[1] + 0.03 * p->bbox[3] * (2 * rn_rng_uniform(r) - 1),
                     p->bbox[2] * uni(r, 0.95, 1.05), p->bbox[3] * uni(r, 0.95, 1.05)};
    sb_printf(b, "%s{\"image_id\": %ld, \"bbox\": ", first ? "" : ", ", iid);
    json_box(b, box);
    if (with_score) sb_printf(b, ", \"score\": %.4f", uni(r, 0.5, 1.0));
    sb_printf(b, "}");
}

static int write_mu_json(const char *out, const rn_synth_opts *o, rn_err *err)
{
    int mupots = o->format == RN_SYNTH_MUPOTS;
    sbuf imgs = {0}, anns = {0}, det = {0};
    long aid = 0;
    rn_rng r;
    rn_rng_seed2(&r, o->seed ^ 0xde7ULL, 0);
    sb_printf(&det, "[");
    for (long i = 0; i < o->images; i++) {
        rn_synth_image im;
        char name[256];
        make_scene(&im, o, i);
        image_name(name, sizeof name, o, i);
        sb_printf(&imgs, "%s{\"id\": %ld, \"file_name\": \"%s\", \"width\": %d, \"height\": %d, ", i ? ", " : "", i,
                  name, im.width, im.height);
        if (mupots) sb_printf(&imgs, "\"intrinsic\": [%.4f, %.4f, %.4f, %.4f]}", im.f[0], im.f[1], im.c[0], im.c[1]);
        else sb_printf(&imgs, "\"f\": [%.4f, %.4f], \"c\": [%.4f, %.4f]}", im.f[0], im.f[1], im.c[0], im.c[1]);
        for (int p = 0; p < im.n_people; p++, aid++) {
            json_mu_ann(&anns, &im.people[p], aid, i, mupots ? MUPOTS_JOINTS : RN_SYNTH_JOINTS, mupots);
            if (mupots) json_det(&det, &im.people[p], i, aid == 0, 1, &r);
        }
    }
    sbuf all = {0};
    sb_printf(&all, "{\"images\": [%s], \"annotations\": [%s]}\n", imgs.p ? imgs.p : "", anns.p ? anns.p : "");
    sb_printf(&det, "]\n");
    const rn_set_desc *set = format_set(o);
    int rc = write_at(out, mupots ? set->test : set->train, &all, err);
    if (!rc && mupots) rc = write_at(out, set->det, &det, err);
    free(imgs.p);
    free(anns.p);
    free(det.p);
    free(all.p);
    return rc ? -1 : 0;
}

/* A 2D annotation (COCO: 17 keypoints, MPII: 16) with keypoints [x, y, v] x n: v 2 (COCO; 1, labelled
 * but hidden, on every fifth) or 1 (MPII) where the joint is in the image, else 0 with x = y = 0, as the
 * sets mark an unlabelled joint; every eleventh joint is left unlabelled. */
static void json_2d_ann(sbuf *b, const rn_synth_person *p, long aid, long iid, int coco)
{
    int n = coco ? COCO_KP : MPII_KP, labelled = 0;
    double kp[COCO_KP][3];
    for (int k = 0; k < n; k++) {
        int m = coco ? COCO_FROM_MU[k] : MPII_FROM_MU[k];
        double x = 0, y = 0;
        int v = 0;
        if (m >= 0) x = p->img[m][0], y = p->img[m][1], v = p->vis[m];
        else if (!coco && k == MPII_NECK) {
            x = 0.5 * (p->img[MU_THORAX][0] + p->img[MU_HEAD][0]);
            y = 0.5 * (p->img[MU_THORAX][1] + p->img[MU_HEAD][1]);
            v = p->vis[MU_THORAX] && p->vis[MU_HEAD];
        }
        if ((aid * 7 + k) % 11 == 0) v = 0; /* a joint the annotator left out, as real sets have */
        kp[k][0] = v ? x : 0, kp[k][1] = v ? y : 0, kp[k][2] = v ? (coco && (aid + k) % 5 ? 2 : 1) : 0;
        labelled += v;
    }
    sb_printf(b, "%s{\"id\": %ld, \"image_id\": %ld, \"bbox\": ", aid ? ", " : "", aid, iid);
    json_box(b, p->bbox);
    sb_printf(b, ", \"area\": %.3f, \"iscrowd\": 0, \"num_keypoints\": %d, \"keypoints\": [", p->bbox[2] * p->bbox[3],
              labelled);
    for (int k = 0; k < n; k++) sb_printf(b, "%s%.4f, %.4f, %d", k ? ", " : "", kp[k][0], kp[k][1], (int)kp[k][2]);
    sb_printf(b, "]}");
}

static int write_2d_json(const char *out, const rn_synth_opts *o, rn_err *err)
{
    int coco = o->format == RN_SYNTH_COCO;
    sbuf imgs = {0}, anns = {0}, all = {0};
    long aid = 0;
    for (long i = 0; i < o->images; i++) {
        rn_synth_image im;
        char name[256];
        make_scene(&im, o, i);
        image_name(name, sizeof name, o, i);
        sb_printf(&imgs, "%s{\"id\": %ld, \"file_name\": \"%s\", \"width\": %d, \"height\": %d}", i ? ", " : "",
                  i + 1, name, im.width, im.height);
        for (int p = 0; p < im.n_people; p++, aid++) json_2d_ann(&anns, &im.people[p], aid, i + 1, coco);
    }
    sb_printf(&all, "{\"images\": [%s], \"annotations\": [%s]}\n", imgs.p ? imgs.p : "", anns.p ? anns.p : "");
    int rc = write_at(out, format_set(o)->train, &all, err);
    free(imgs.p);
    free(anns.p);
    free(all.p);
    return rc;
}

static void json_h36m_image(sbuf *imgs, sbuf *anns, const rn_synth_opts *o, long i, int first)
{
    rn_synth_image im;
    char name[256];
    h36m_ref r = h36m_of(i);
    make_scene(&im, o, i);
    image_name(name, sizeof name, o, i);
    sb_printf(imgs,
              "%s{\"id\": %ld, \"file_name\": \"%s\", \"width\": %d, \"height\": %d, \"subject\": %d, "
              "\"action_idx\": %d, \"subaction_idx\": %d, \"frame_idx\": %ld, \"cam_idx\": %d}",
              first ? "" : ", ", i, name, im.width, im.height, r.subject, r.action, r.subaction, r.frame, r.cam);
    sb_printf(anns, "%s{\"id\": %ld, \"image_id\": %ld, \"bbox\": ", first ? "" : ", ", i, i);
    json_box(anns, im.people[0].bbox);
    sb_printf(anns, ", \"keypoints_vis\": [");
    for (int k = 0; k < H36M_JOINTS; k++) sb_printf(anns, "%s%s", k ? ", " : "", "true");
    sb_printf(anns, "]}");
}

static void json_h36m_cameras(sbuf *b, const rn_synth_opts *o, int subject)
{
    int w = o->width > 0 ? o->width : 512, h = o->height > 0 ? o->height : 512;
    sb_printf(b, "{");
    for (int c = 1; c <= 4; c++) {
        h36m_cam cam;
        h36m_camera(&cam, o->seed, subject, c, w, h);
        const double *R = cam.R;
        sb_printf(b, "%s\"%d\": {\"R\": [[%.9f, %.9f, %.9f], [%.9f, %.9f, %.9f], [%.9f, %.9f, %.9f]], ",
                  c > 1 ? ", " : "", c, R[0], R[1], R[2], R[3], R[4], R[5], R[6], R[7], R[8]);
        sb_printf(b, "\"t\": [%.6f, %.6f, %.6f], \"f\": [%.4f, %.4f], \"c\": [%.4f, %.4f]}", cam.t[0], cam.t[1],
                  cam.t[2], cam.im.f[0], cam.im.f[1], cam.im.c[0], cam.im.c[1]);
    }
    sb_printf(b, "}\n");
}

/* Does subject `pos` have an image with this action (and subaction, 0 = any)? */
static int h36m_has(const rn_synth_opts *o, int pos, int action, int subaction)
{
    for (long i = pos; i < o->images; i += H36M_N_SUBJ) {
        h36m_ref r = h36m_of(i);
        if (r.action == action && (subaction == 0 || r.subaction == subaction)) return 1;
    }
    return 0;
}

static void json_h36m_frames(sbuf *b, const rn_synth_opts *o, int pos, int action, int subaction)
{
    int w = o->width > 0 ? o->width : 512, h = o->height > 0 ? o->height : 512, first = 1;
    for (long i = pos; i < o->images; i += H36M_N_SUBJ) {
        h36m_ref r = h36m_of(i);
        if (r.action != action || r.subaction != subaction) continue;
        rn_synth_image im;
        h36m_cam cam;
        make_scene(&im, o, i);
        h36m_camera(&cam, o->seed, r.subject, r.cam, w, h);
        sb_printf(b, "%s\"%ld\": [", first ? "" : ", ", r.frame);
        first = 0;
        for (int k = 0; k < H36M_JOINTS; k++) {
            double wd[3];
            cam_to_world(wd, im.people[0].cam[H36M_FROM_MU[k]], &cam);
            sb_printf(b, "%s[%.5f, %.5f, %.5f]", k ? ", " : "", wd[0], wd[1], wd[2]);
        }
        sb_printf(b, "]");
    }
}

/* {action: {subaction: {frame: [[x, y, z] x 17]}}} in world mm. */
static void json_h36m_joints(sbuf *b, const rn_synth_opts *o, int pos)
{
    int fa = 1;
    sb_printf(b, "{");
    for (int a = 2; a <= 16; a++) {
        if (!h36m_has(o, pos, a, 0)) continue;
        sb_printf(b, "%s\"%d\": {", fa ? "" : ", ", a);
        fa = 0;
        for (int s = 1, fs = 1; s <= 2; s++) {
            if (!h36m_has(o, pos, a, s)) continue;
            sb_printf(b, "%s\"%d\": {", fs ? "" : ", ", s);
            fs = 0;
            json_h36m_frames(b, o, pos, a, s);
            sb_printf(b, "}");
        }
        sb_printf(b, "}");
    }
    sb_printf(b, "}\n");
}

static int write_h36m_subject(const char *out, const rn_synth_opts *o, int pos, sbuf *det, rn_rng *r, rn_err *err)
{
    sbuf imgs = {0}, anns = {0}, all = {0}, cams = {0}, joints = {0};
    int subject = H36M_SUBJ[pos];
    for (long i = pos; i < o->images; i += H36M_N_SUBJ) {
        json_h36m_image(&imgs, &anns, o, i, i == pos);
        if (subject == 9 || subject == 11) {
            rn_synth_image im;
            make_scene(&im, o, i);
            json_det(det, &im.people[0], i, det->n == 1, 0, r);
        }
    }
    sb_printf(&all, "{\"images\": [%s], \"annotations\": [%s]}\n", imgs.p ? imgs.p : "", anns.p ? anns.p : "");
    json_h36m_cameras(&cams, o, subject);
    json_h36m_joints(&joints, o, pos);
    char path[4300];
    rn_read_h36m_path(path, sizeof path, out, subject, "data");
    int rc = sb_write(&all, path, err);
    rn_read_h36m_path(path, sizeof path, out, subject, "camera");
    rc = rc || sb_write(&cams, path, err);
    rn_read_h36m_path(path, sizeof path, out, subject, "joint_3d");
    rc = rc || sb_write(&joints, path, err);
    free(imgs.p);
    free(anns.p);
    free(all.p);
    free(cams.p);
    free(joints.p);
    return rc ? -1 : 0;
}

static int write_h36m_json(const char *out, const rn_synth_opts *o, rn_err *err)
{
    char dir[4300];
    rn_read_h36m_path(dir, sizeof dir, out, H36M_SUBJ[0], "data");
    *strrchr(dir, '/') = '\0';
    if (rn_mkdirs(dir, err)) return -1;
    sbuf det = {0};
    rn_rng r;
    rn_rng_seed2(&r, o->seed ^ 0xde7ULL, 1);
    sb_printf(&det, "[");
    int rc = 0;
    for (int pos = 0; pos < H36M_N_SUBJ && !rc; pos++) rc = write_h36m_subject(out, o, pos, &det, &r, err);
    sb_printf(&det, "]\n");
    if (!rc) rc = write_at(out, format_set(o)->det, &det, err);
    free(det.p);
    return rc;
}

/* Renders and writes every image (OpenMP over images); first error wins. */
static int write_images(const char *out, const rn_synth_opts *o, rn_err *err)
{
    int w = o->width > 0 ? o->width : 512, h = o->height > 0 ? o->height : 512;
    int failed = 0;
#pragma omp parallel
    {
        unsigned char *rgb = rn_xmalloc((size_t)w * h * 3);
        rn_err e = {{0}};
#pragma omp for schedule(dynamic, 4)
        for (long i = 0; i < o->images; i++) {
            int stop;
#pragma omp atomic read
            stop = failed;
            if (stop) continue;
            rn_synth_image im;
            char name[256], path[4600], dir[4600];
            make_scene(&im, o, i);
            rn_synth_render(rgb, &im, o->seed, i);
            image_name(name, sizeof name, o, i);
            snprintf(path, sizeof path, "%s/%s/%s", out, image_root(o), name);
            snprintf(dir, sizeof dir, "%s", path);
            *strrchr(dir, '/') = '\0';
            if (rn_mkdirs(dir, &e) || rn_synth_write_jpeg(path, rgb, w, h, &e)) {
#pragma omp critical(rn_synth_err)
                if (!failed) {
                    failed = 1;
                    *err = e;
                }
            }
        }
        free(rgb);
    }
    return failed ? -1 : 0;
}

/* One syncfs for all the images (an fsync per JPEG costs ~15 ms each). */
static int sync_dir(const char *dir, rn_err *err)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return rn_err_set(err, "%s: cannot open: %s", dir, strerror(errno));
    int bad = syncfs(fd);
    close(fd);
    return bad ? rn_err_set(err, "%s: syncfs failed: %s", dir, strerror(errno)) : 0;
}

int rn_synth_write(const char *out_dir, const rn_synth_opts *o, rn_err *err)
{
    if (o->images <= 0) return rn_err_set(err, "synth: --images must be > 0 (got %ld)", o->images);
    if (o->width < 0 || o->height < 0 || o->width > 8192 || o->height > 8192 || (o->width && o->width < 64) ||
        (o->height && o->height < 64))
        return rn_err_set(err, "synth: image size must be 64..8192 (got %d x %d)", o->width, o->height);
    if (rn_mkdirs(out_dir, err)) return -1;
    if (!o->no_images && write_images(out_dir, o, err)) return -1;
    if (!o->no_images && sync_dir(out_dir, err)) return -1;
    if (o->format == RN_SYNTH_H36M) return write_h36m_json(out_dir, o, err);
    if (o->format == RN_SYNTH_COCO || o->format == RN_SYNTH_MPII) return write_2d_json(out_dir, o, err);
    return write_mu_json(out_dir, o, err);
}
