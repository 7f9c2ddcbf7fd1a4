/* Human3.6M (the authors' Human36M.py) and 3DPW (PW3D.py). */
#include <stdio.h>
#include <string.h>

#include "data/sets/bbox.h"
#include "data/json/jsonf.h"
#include "data/sets/readers.h"

/* Human3.6M's 17 joints (their Thorax, the 18th, is added from the shoulders) */
enum { H36M_ROOT = 0, H36M_JOINTS = 17, H36M_LSHOULDER = 11, H36M_RSHOULDER = 14, PW3D_ROOT = 0 };

typedef struct h36m_files {
    rn_jdoc *data, *cams, *joints;
    char data_path[4096], cam_path[4096], joint_path[4096];
} h36m_files;

static void h36m_files_free(h36m_files *f)
{
    rn_jdoc_free(f->data);
    rn_jdoc_free(f->cams);
    rn_jdoc_free(f->joints);
}

void rn_read_h36m_path(char *buf, size_t len, const char *data_dir, int subject, const char *kind)
{
    snprintf(buf, len, "%s/Human36M/annotations/Human36M_subject%d_%s.json", data_dir, subject, kind);
}

void rn_read_h36m_files(char paths[][4096], int *n, int max, const rn_read_ctx *ctx)
{
    int subj[8], ns = rn_h36m_subjects(ctx->opts->protocol, ctx->split, subj);
    static const char *kinds[] = {"data", "camera", "joint_3d"};
    for (int i = 0; i < ns; i++)
        for (int k = 0; k < 3; k++) {
            RN_ASSERT(*n < max);
            rn_read_h36m_path(paths[(*n)++], 4096, ctx->data_dir, subj[i], kinds[k]);
        }
}

static int h36m_files_load(h36m_files *f, const rn_read_ctx *ctx, int subject, rn_err *err)
{
    memset(f, 0, sizeof *f);
    rn_read_h36m_path(f->data_path, sizeof f->data_path, ctx->data_dir, subject, "data");
    rn_read_h36m_path(f->cam_path, sizeof f->cam_path, ctx->data_dir, subject, "camera");
    rn_read_h36m_path(f->joint_path, sizeof f->joint_path, ctx->data_dir, subject, "joint_3d");
    if (!(f->data = rn_read_json(ctx, f->data_path, err))) return -1;
    if (!(f->cams = rn_read_json(ctx, f->cam_path, err))) return -1;
    if (!(f->joints = rn_read_json(ctx, f->joint_path, err))) return -1;
    return 0;
}

/* Detector boxes keyed by image id (a later entry wins, as the authors' dict). */
typedef struct det_boxes {
    rn_jdoc *doc;
    const rn_jnode *root;
    rn_idmap map;
    char path[4096];
} det_boxes;

static int det_load(det_boxes *d, const rn_read_ctx *ctx, rn_err *err)
{
    snprintf(d->path, sizeof d->path, "%s/%s", ctx->data_dir, ctx->set->det);
    if (!(d->doc = rn_read_json(ctx, d->path, err))) return -1;
    d->root = d->doc->root;
    if (!rn_jis_array(d->root)) return rn_err_set(err, "%s: top level is not an array", d->path);
    size_t n = rn_jarray_size(d->root);
    rn_idmap_init(&d->map, n);
    for (size_t i = n; i-- > 0;) {
        rn_jctx jc = {.file = d->path, .rec = (long)i, .image_id = -1, .ann_id = -1};
        long iid;
        if (rn_jget_int(&jc, rn_jarray_get(d->root, i), "image_id", &iid, err)) return -1;
        rn_idmap_put(&d->map, iid, i);
    }
    return 0;
}

static int subject_in(long s, const int *list, int n)
{
    for (int i = 0; i < n; i++)
        if (list[i] == s) return 1;
    return 0;
}

typedef struct h36m_img {
    long subject, frame, cam, action, subaction;
} h36m_img;

static int h36m_img_fields(const rn_jctx *jc, const rn_jnode *img, h36m_img *h, rn_err *err)
{
    if (rn_jget_int(jc, img, "subject", &h->subject, err) || rn_jget_int(jc, img, "frame_idx", &h->frame, err) ||
        rn_jget_int(jc, img, "cam_idx", &h->cam, err) || rn_jget_int(jc, img, "action_idx", &h->action, err) ||
        rn_jget_int(jc, img, "subaction_idx", &h->subaction, err))
        return -1;
    return 0;
}

/* A camera of Human36M_subject<n>_camera.json and a frame's world joints of _joint_3d.json. */
typedef struct h36m_view {
    double R[9], t[3], f[2], c[2];
    const rn_jnode *joints; /* the frame's [[x, y, z] x 17] */
} h36m_view;

static int h36m_view_read(h36m_view *hv, rn_sample *s, const h36m_files *f, const h36m_img *h, rn_jctx *jc,
                          rn_err *err)
{
    char key[32];
    jc->file = f->cam_path;
    snprintf(key, sizeof key, "%ld", h->cam);
    const rn_jnode *cam = rn_jget(jc, f->cams->root, key, err);
    if (!cam || rn_jflat(jc, rn_jget(jc, cam, "R", err), "R", hv->R, 9, err) ||
        rn_jflat(jc, rn_jget(jc, cam, "t", err), "t", hv->t, 3, err) ||
        rn_jflat(jc, rn_jget(jc, cam, "f", err), "f", hv->f, 2, err) ||
        rn_jflat(jc, rn_jget(jc, cam, "c", err), "c", hv->c, 2, err) || rn_read_fc(jc, "f", hv->f, hv->c, s, err))
        return -1;
    jc->file = f->joint_path;
    const rn_jnode *v = f->joints->root;
    long path[3] = {h->action, h->subaction, h->frame};
    for (int i = 0; i < 3 && v; i++) {
        snprintf(key, sizeof key, "%ld", path[i]);
        v = rn_jget(jc, v, key, err);
    }
    if (!v || !rn_jis_array(v) || rn_jarray_size(v) != H36M_JOINTS)
        return v ? rn_jfail(jc, key, err, "not an array of %d joints (%zu)", H36M_JOINTS,
                            rn_jis_array(v) ? rn_jarray_size(v) : 0)
                 : -1;
    hv->joints = v;
    return 0;
}

/* root_cam = R * root_world + t, root_img = cam2pixel(root_cam), in float64. */
static int h36m_root(rn_sample *s, const h36m_view *hv, const rn_jctx *jc, rn_err *err)
{
    double world[3], cam3[3], px[3];
    if (rn_jvec(jc, rn_jarray_get(hv->joints, H36M_ROOT), "joint_3d", world, 3, NULL, err)) return -1;
    rn_world2cam(cam3, world, hv->R, hv->t);
    rn_cam2pixel(px, cam3, hv->f, hv->c);
    for (int i = 0; i < 3; i++) {
        s->root_cam[i] = (float)cam3[i];
        s->root_img[i] = (float)px[i];
    }
    return 0;
}

/* PoseNet's joints as their Human36M.py computes them, in float32 (their np.float32 R, t, f, c and
 * joints): the Thorax added (the shoulders' mean, in world space), world2cam (R's rows summed left
 * to right), cam2pixel, depth minus the root's; vis 1. */
static int h36m_joints(float *out, const h36m_view *hv, const rn_jctx *jc, rn_err *err)
{
    float w[H36M_JOINTS + 1][3], R[9], t[3], f[2], c[2];
    for (int i = 0; i < 9; i++) R[i] = (float)hv->R[i];
    for (int i = 0; i < 3; i++) t[i] = (float)hv->t[i];
    for (int i = 0; i < 2; i++) f[i] = (float)hv->f[i], c[i] = (float)hv->c[i];
    for (int j = 0; j < H36M_JOINTS; j++) {
        double d[3];
        if (rn_jvec(jc, rn_jarray_get(hv->joints, (size_t)j), "joint_3d", d, 3, NULL, err)) return -1;
        for (int i = 0; i < 3; i++) w[j][i] = (float)d[i];
    }
    for (int i = 0; i < 3; i++) w[H36M_JOINTS][i] = (w[H36M_LSHOULDER][i] + w[H36M_RSHOULDER][i]) * 0.5f;
    for (int j = 0; j <= H36M_JOINTS; j++) {
        float *o = out + (size_t)j * RN_JOINT_F;
        for (int i = 0; i < 3; i++)
            o[RN_JOINT_CAM + i] = R[3 * i] * w[j][0] + R[3 * i + 1] * w[j][1] + R[3 * i + 2] * w[j][2] + t[i];
        float z = o[RN_JOINT_CAM + 2] + 1e-8f;
        o[RN_JOINT_IMG] = o[RN_JOINT_CAM] / z * f[0] + c[0];
        o[RN_JOINT_IMG + 1] = o[RN_JOINT_CAM + 1] / z * f[1] + c[1];
        o[RN_JOINT_VIS] = 1.0f;
    }
    float root_z = out[H36M_ROOT * RN_JOINT_F + RN_JOINT_CAM + 2];
    for (int j = 0; j <= H36M_JOINTS; j++)
        out[(size_t)j * RN_JOINT_F + RN_JOINT_IMG + 2] = out[(size_t)j * RN_JOINT_F + RN_JOINT_CAM + 2] - root_z;
    return rn_read_joints_finite(out, H36M_JOINTS + 1, jc, err);
}

static int h36m_box(rn_sample *s, const rn_jnode *ann, const det_boxes *det, const rn_read_ctx *ctx,
                    const rn_jctx *jc, rn_err *err)
{
    double box[4];
    int integral;
    size_t at;
    if (!det) {
        if (rn_jget_vec(jc, ann, "bbox", box, 4, &integral, err)) return -1;
    } else {
        if (!rn_idmap_get(&det->map, s->image_id, &at))
            return rn_jfail(jc, NULL, err, "no detector box for this image in %s", det->path);
        rn_jctx dc = {.file = det->path, .rec = (long)at, .image_id = s->image_id, .ann_id = -1};
        if (rn_jget_vec(&dc, rn_jarray_get(det->root, at), "bbox", box, 4, &integral, err)) return -1;
    }
    return rn_read_box(s, box, integral, box[2] * box[3], ctx, jc, err);
}

static int h36m_ann(rn_dsbuild *b, const h36m_files *f, const rn_jnode *images, const rn_idmap *map,
                    const rn_jnode *ann, const det_boxes *det, const int *subj, int ns, const rn_read_ctx *ctx,
                    rn_jctx *jc, rn_err *err)
{
    long iid, aid;
    size_t at;
    h36m_img h;
    if (!rn_jget_int(jc, ann, "id", &aid, err)) jc->ann_id = aid;
    if (rn_jget_int(jc, ann, "image_id", &iid, err)) return -1;
    jc->image_id = iid;
    if (!rn_idmap_get(map, iid, &at)) return rn_jfail(jc, "image_id", err, "image %ld is not in 'images'", iid);
    const rn_jnode *img = rn_jarray_get(images, at);
    if (h36m_img_fields(jc, img, &h, err)) return -1;
    int ratio = ctx->split == RN_SPLIT_TRAIN ? 5 : 64;
    if (!subject_in(h.subject, subj, ns) || h.frame % ratio != 0) return 0;
    rn_sample *s = rn_dsbuild_push(b);
    const char *file;
    h36m_view hv;
    rn_jctx vc = *jc;
    int k = rn_read_image_basics(jc, img, s, &file, err);
    if (!k) k = h36m_view_read(&hv, s, f, &h, &vc, err);
    if (!k) k = h36m_root(s, &hv, &vc, err);
    if (!k) k = h36m_joints(rn_dsbuild_joints(b), &hv, &vc, err);
    double vis;
    if (!k) k = rn_jget_row(jc, ann, "keypoints_vis", H36M_ROOT, 1, &vis, 1, err);
    if (!k) k = h36m_box(s, ann, det, ctx, jc, err);
    if (!k) {
        s->root_vis = (float)vis;
        k = rn_read_finite(s, jc, err);
    }
    if (k) {
        b->n--;
        return k < 0 ? -1 : 0;
    }
    s->ann_id = (int32_t)jc->ann_id;
    s->action = (int32_t)h.action;
    s->subject = (int32_t)h.subject;
    rn_read_path(b, s, "Human36M/images", file);
    return 0;
}

static int h36m_subject(rn_dsbuild *b, const rn_read_ctx *ctx, int subject, const det_boxes *det, const int *subj,
                        int ns, rn_err *err)
{
    h36m_files hf;
    rn_read_file f = {0};
    int rc = h36m_files_load(&hf, ctx, subject, err);
    if (!rc) rc = rn_read_file_index(&f, hf.data_path, hf.data->root, 1, err);
    for (size_t a = 0; !rc && a < rn_jarray_size(f.anns); a++) {
        rn_jctx ac = rn_read_rec(&f, "annotation", (long)a);
        rc = h36m_ann(b, &hf, f.images, &f.map, rn_jarray_get(f.anns, a), det, subj, ns, ctx, &ac, err);
    }
    rn_read_file_close(&f);
    h36m_files_free(&hf);
    return rc;
}

int rn_read_human36m(rn_dsbuild *b, const rn_read_ctx *ctx, rn_err *err)
{
    b->J = H36M_JOINTS + 1;
    b->skeleton = "Human36M";
    int subj[8], ns = rn_h36m_subjects(ctx->opts->protocol, ctx->split, subj);
    det_boxes det = {0};
    int use_det = ctx->split == RN_SPLIT_TEST && ctx->opts->use_det_bbox;
    int rc = use_det ? det_load(&det, ctx, err) : 0;
    for (int i = 0; !rc && i < ns; i++) rc = h36m_subject(b, ctx, subj[i], use_det ? &det : NULL, subj, ns, err);
    if (det.map.keys) rn_idmap_free(&det.map);
    rn_jdoc_free(det.doc);
    return rc;
}

/* Row PW3D_ROOT of joint_cam reshaped to (-1, 3): nested rows or a flat list. */
static int pw3d_root(const rn_jctx *jc, const rn_jnode *jv, double root[3], rn_err *err)
{
    if (rn_jis_array(rn_jarray_get(jv, 0))) {
        if (rn_jarray_size(jv) <= PW3D_ROOT) return rn_jfail(jc, "joint_cam", err, "too few joints");
        return rn_jvec(jc, rn_jarray_get(jv, PW3D_ROOT), "joint_cam", root, 3, NULL, err);
    }
    size_t n = rn_jarray_size(jv);
    if (n % 3 != 0 || n < 3 * (PW3D_ROOT + 1))
        return rn_jfail(jc, "joint_cam", err, "%zu values, not a multiple of 3", n);
    for (int i = 0; i < 3; i++)
        if (rn_jnum(jc, rn_jarray_get(jv, 3 * PW3D_ROOT + i), "joint_cam", &root[i], err)) return -1;
    return 0;
}

static int pw3d_ann(rn_dsbuild *b, const rn_jnode *images, const rn_idmap *map, const rn_jnode *ann,
                    const rn_read_ctx *ctx, rn_jctx *jc, rn_err *err)
{
    long iid, aid;
    size_t at;
    if (!rn_jget_int(jc, ann, "id", &aid, err)) jc->ann_id = aid;
    if (rn_jget_int(jc, ann, "image_id", &iid, err)) return -1;
    jc->image_id = iid;
    if (!rn_idmap_get(map, iid, &at)) return rn_jfail(jc, "image_id", err, "image %ld is not in 'images'", iid);
    const rn_jnode *img = rn_jarray_get(images, at), *cp, *jv;
    rn_sample *s = rn_dsbuild_push(b);
    const char *file, *seq;
    double f[2], c[2], root[3], px[3], box[4];
    int integral, k = rn_read_image_basics(jc, img, s, &file, err);
    if (!k) k = rn_jget_str(jc, img, "sequence", &seq, err);
    if (!k) k = (cp = rn_jget(jc, img, "cam_param", err)) ? 0 : -1;
    if (!k) k = rn_jget_vec(jc, cp, "focal", f, 2, NULL, err) || rn_jget_vec(jc, cp, "princpt", c, 2, NULL, err);
    if (!k) k = rn_read_fc(jc, "focal", f, c, s, err);
    if (!k) k = (jv = rn_jget_array(jc, ann, "joint_cam", err)) ? 0 : -1;
    if (!k) k = pw3d_root(jc, jv, root, err);
    if (!k) k = rn_jget_vec(jc, ann, "bbox", box, 4, &integral, err);
    if (!k) k = rn_read_box(s, box, integral, box[2] * box[3], ctx, jc, err);
    if (!k) {
        rn_cam2pixel(px, root, f, c);
        for (int i = 0; i < 3; i++) {
            s->root_cam[i] = (float)root[i];
            s->root_img[i] = (float)px[i];
        }
        k = rn_read_finite(s, jc, err);
    }
    if (k) {
        b->n--;
        return k < 0 ? -1 : 0;
    }
    s->root_vis = px[0] >= 0 && px[0] < s->width && px[1] >= 0 && px[1] < s->height ? 1.0f : 0.0f;
    s->ann_id = (int32_t)jc->ann_id;
    char prefix[4200];
    snprintf(prefix, sizeof prefix, "PW3D/data/imageFiles/%s", seq);
    rn_read_path(b, s, prefix, file);
    return 0;
}

int rn_read_pw3d(rn_dsbuild *b, const rn_read_ctx *ctx, rn_err *err)
{
    rn_read_file f;
    if (rn_read_file_open(&f, ctx, ctx->split == RN_SPLIT_TRAIN ? ctx->set->train : ctx->set->test, 1, err)) return -1;
    int rc = 0;
    for (size_t a = 0; !rc && a < rn_jarray_size(f.anns); a++) {
        rn_jctx ac = rn_read_rec(&f, "annotation", (long)a);
        rc = pw3d_ann(b, f.images, &f.map, rn_jarray_get(f.anns, a), ctx, &ac, err);
    }
    rn_read_file_close(&f);
    return rc;
}
