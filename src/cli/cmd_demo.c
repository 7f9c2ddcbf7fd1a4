/* rootnet demo: the root (x, y, depth, camera X, Y, Z) of each boxed person in one image, and with a PoseNet
 * their joints. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/eval_flags.h"
#include "cli/exit.h"
#include "core/afile.h"
#include "data/sets/bbox.h"
#include "data/image/draw.h"
#include "data/image/image.h"
#include "data/sets/skeleton.h"
#include "infer/predict.h"
#include "nn/calib.h"
#include "nn/net.h"
#include "nn/run_settings.h"
#include "viz/people.h"

typedef struct demo_cli {
    const char *snapshot, *pose_snapshot, *image, *format, *focal, *princpt, *out, *labels_json;
    rn_eval_flags ev;
    rn_multi bbox;
    int json;
} demo_cli;

static int parse_boxes(double (*boxes)[4], const demo_cli *c, rn_err *err)
{
    int xyxy = 0;
    if (c->format && !strcmp(c->format, "xyxy")) xyxy = 1;
    else if (c->format && strcmp(c->format, "xywh"))
        return rn_err_set(err, "--bbox-format '%s': expected xywh or xyxy", c->format);
    if (c->bbox.n == 0) return rn_err_set(err, "at least one --bbox x,y,w,h is required");
    if (c->bbox.n > RN_PREDICT_MAX_BOXES) return rn_err_set(err, "at most %d boxes", RN_PREDICT_MAX_BOXES);
    for (int i = 0; i < c->bbox.n; i++)
        if (rn_predict_parse_box(boxes[i], c->bbox.v[i], xyxy, err)) return -1;
    return 0;
}

static int fill_in(rn_predict_in *in, double (*boxes)[4], const demo_cli *c, rn_err *err)
{
    memset(in, 0, sizeof *in);
    if (rn_eval_flags_check(&c->ev, &in->precision, err)) return -1;
    if (parse_boxes(boxes, c, err)) return -1;
    if (c->focal && rn_predict_parse_numbers(in->f, 2, c->focal, "--focal", err)) return -1;
    if (c->focal && rn_focal_check(in->f, err)) return rn_err_prefix(err, "--focal");
    if (c->princpt && rn_predict_parse_numbers(in->c, 2, c->princpt, "--princpt", err)) return -1;
    if (c->princpt && rn_princpt_check(in->c, err)) return rn_err_prefix(err, "--princpt");
    in->have_c = c->princpt != NULL;
    in->image = c->image;
    in->boxes = (const double(*)[4])boxes;
    in->n = c->bbox.n;
    in->threads = (int)c->ev.threads;
    in->device = c->ev.device;
    in->no_fold = c->ev.no_fold;
    return 0;
}

/* The PoseNet's joints of every person (J 0: no PoseNet). */
typedef struct demo_pose {
    int J;
    const rn_skeleton *sk;
    double img[RN_PREDICT_MAX_BOXES * RN_SKELETON_MAX * 3], cam[RN_PREDICT_MAX_BOXES * RN_SKELETON_MAX * 3];
} demo_pose;

/* Person i's joints in one line: the root-relative extent and the head and feet. */
static void print_joints(const demo_pose *q, int i)
{
    const double *cam = q->cam + (size_t)i * 3 * (size_t)q->J, *root = cam + 3 * q->sk->root;
    double top = INFINITY, bottom = -INFINITY, w = 0;
    for (int j = 0; j < q->J; j++) {
        top = fmin(top, cam[3 * j + 1]), bottom = fmax(bottom, cam[3 * j + 1]);
        w = fmax(w, hypot(cam[3 * j] - root[0], cam[3 * j + 2] - root[2]));
    }
    printf("  %d joints (%s): %s at X %.1f  Y %.1f  Z %.1f mm; height %.0f mm (Y %.0f .. %.0f), reach %.0f mm "
           "from it\n", q->J, q->sk->name, q->sk->joints[q->sk->root], root[0], root[1], root[2], bottom - top, top,
           bottom, w);
}

static void print_text(const rn_person_root *r, int n, const rn_predict_info *info, const demo_pose *q,
                       const char *out, const char *out3d)
{
    printf("image %d x %d, focal %.1f, %.1f px, principal point %.1f, %.1f px\n", info->width, info->height,
           info->f[0], info->f[1], info->c[0], info->c[1]);
    if (info->default_focal)
        printf("note: no --focal given, so the authors' convention is used (focal 1500 px%s). Depth is only right "
               "for that focal: with the true focal fx, fy, depth_true = depth * sqrt(fx * fy) / 1500 (X, Y scale "
               "the same way), or rerun with --focal fx,fy [--princpt cx,cy].\n",
               info->default_c ? ", principal point at the image centre" : "");
    for (int i = 0; i < n; i++) {
        printf("person %d: box %.1f,%.1f,%.1f,%.1f  processed box %.2f,%.2f,%.2f,%.2f  k %.2f  root x %.1f px  "
               "y %.1f px  depth %.1f mm  camera X %.1f  Y %.1f  Z %.1f mm\n",
               i + 1, r[i].box[0], r[i].box[1], r[i].box[2], r[i].box[3], r[i].bbox[0], r[i].bbox[1], r[i].bbox[2],
               r[i].bbox[3], r[i].k, r[i].img[0], r[i].img[1], r[i].img[2], r[i].cam[0], r[i].cam[1], r[i].cam[2]);
        if (q->J) print_joints(q, i);
    }
    if (out) printf("wrote %s\n", out);
    if (out3d) printf("wrote %s\n", out3d);
}

/* "joints": [{"name", "img": [x, y, depth], "cam": [X, Y, Z]}, ...] of person i, as predict's JSON. */
static void print_json_joints(const demo_pose *q, int i)
{
    printf(", \"joints\": [");
    for (int j = 0; j < q->J; j++) {
        const double *a = q->img + 3 * ((size_t)i * (size_t)q->J + (size_t)j), *b = q->cam + 3 * ((size_t)i * (size_t)q->J + (size_t)j);
        printf("%s{\"name\": \"%s\", \"img\": [%.17g, %.17g, %.17g], \"cam\": [%.17g, %.17g, %.17g]}", j ? ", " : "",
               q->sk->joints[j], a[0], a[1], a[2], b[0], b[1], b[2]);
    }
    printf("]");
}

static void print_json(const rn_person_root *r, int n, const rn_predict_info *info, const demo_pose *q,
                       const char *out, const char *out3d)
{
    printf("{\"width\": %d, \"height\": %d, \"focal\": [%.17g, %.17g], \"princpt\": [%.17g, %.17g], "
           "\"default_focal\": %s, \"output\": %s%s%s, ",
           info->width, info->height, info->f[0], info->f[1], info->c[0], info->c[1],
           info->default_focal ? "true" : "false", out ? "\"" : "", out ? out : "null", out ? "\"" : "");
    if (q->J) printf("\"output_3d\": %s%s%s, ", out3d ? "\"" : "", out3d ? out3d : "null", out3d ? "\"" : "");
    printf("\"people\": [");
    for (int i = 0; i < n; i++) {
        printf("%s{\"box\": [%.17g, %.17g, %.17g, %.17g], \"bbox\": [%.17g, %.17g, %.17g, %.17g], \"k\": %.17g, "
               "\"root_img\": [%.17g, %.17g, %.17g], \"root_cam\": [%.17g, %.17g, %.17g]",
               i ? ", " : "", r[i].box[0], r[i].box[1], r[i].box[2], r[i].box[3], r[i].bbox[0], r[i].bbox[1],
               r[i].bbox[2], r[i].bbox[3], r[i].k, r[i].img[0], r[i].img[1], r[i].img[2], r[i].cam[0], r[i].cam[1],
               r[i].cam[2]);
        if (q->J) print_json_joints(q, i);
        printf("}");
    }
    printf("]}\n");
}

/* The label rectangles of the picture as JSON (a debugging aid; tests check them). */
static int write_labels(const char *path, const rn_person_label *lab, int n, const rn_people_layout *lay, rn_err *err)
{
    size_t cap = 256 + (size_t)n * 256, len = 0;
    char *buf = rn_xmalloc(cap);
    len += (size_t)snprintf(buf, cap, "{\"width\": %d, \"height\": %d, \"panel_x\": %d, \"overlaps\": %d, "
                            "\"focal_note\": [%.3f, %.3f, %.3f, %.3f], \"labels\": [", lay->width, lay->height,
                            lay->panel_x, lay->overlaps, lay->note_rect[0], lay->note_rect[1], lay->note_rect[2],
                            lay->note_rect[3]);
    for (int i = 0; i < n; i++) {
        const rn_person_label *l = &lab[i];
        len += (size_t)snprintf(buf + len, cap - len,
                                "%s{\"person\": %d, \"rect\": [%.3f, %.3f, %.3f, %.3f], \"moved\": %s, "
                                "\"dot_rect\": [%.3f, %.3f, %.3f, %.3f], \"colour\": [%d, %d, %d]}",
                                i ? ", " : "", i + 1, l->rect[0], l->rect[1], l->rect[2], l->rect[3],
                                l->moved ? "true" : "false", l->dot_rect[0], l->dot_rect[1], l->dot_rect[2],
                                l->dot_rect[3], l->colour[0], l->colour[1], l->colour[2]);
    }
    len += (size_t)snprintf(buf + len, cap - len, "]}\n");
    rn_afile f;
    int rc = rn_afile_open(&f, path, err) || rn_afile_write(&f, buf, len, err) || rn_afile_commit(&f, err) ? -1 : 0;
    free(buf);
    return rc;
}

static int write_image(const demo_cli *c, const char *out, const char *out3d, const rn_person_root *r, int n,
                       const rn_predict_info *info, const demo_pose *q, rn_err *err)
{
    rn_person_label lab[RN_PREDICT_MAX_BOXES];
    rn_people_layout lay;
    rn_people_pose pose = {q->J, q->J ? q->sk->joints : NULL, q->J ? q->sk->bones : NULL, q->J ? q->sk->nbones : 0,
                           q->img, q->cam};
    if (rn_draw_people_file(c->image, r, n, q->J ? &pose : NULL, info, out, lab, &lay, err)) return -1;
    if (q->J && rn_draw_people_3d(&pose, n, info, out3d, err)) return -1;
    return c->labels_json ? write_labels(c->labels_json, lab, n, &lay, err) : 0;
}

/* The 3D picture's name: out with "_3d" before its extension (demo_output.png: demo_output_3d.png). */
static void path_3d(char *buf, size_t cap, const char *out)
{
    const char *dot = strrchr(out, '.'), *slash = strrchr(out, '/');
    size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - out) : strlen(out);
    snprintf(buf, cap, "%.*s_3d%s", (int)stem, out, out + stem);
}

/* A box read as x,y,w,h that runs well past the image is most likely x1,y1,x2,y2 (rn_bbox_maybe_xyxy). */
static void warn_outside(const demo_cli *c, const rn_person_root *r, int n, const rn_predict_info *info)
{
    if (c->format && strcmp(c->format, "xywh")) return;
    double past;
    for (int i = 0; i < n; i++)
        if (rn_bbox_maybe_xyxy(r[i].box, info->width, info->height, &past))
            fprintf(stderr, "rootnet demo: warning: --bbox '%s' read as x,y,w,h runs %.0f px past the %d x %d "
                    "image; if it is x1,y1,x2,y2, add --bbox-format xyxy\n",
                    c->bbox.v[i], past, info->width, info->height);
}

/* The image is a regular file (checked before the snapshot is read). */
static int check_image(const char *path, rn_err *err)
{
    struct stat st;
    if (stat(path, &st)) return rn_err_set(err, "%s: cannot open: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode)) return rn_err_set(err, "%s: is a folder, not an image", path);
    return 0;
}

/* The roots (and with pp the joints) of c's boxes with the nets loaded. */
static int predict(rn_person_root *r, rn_predict_info *info, demo_pose *q, rn_params *p, rn_params *pp,
                   const rn_predict_in *in, rn_err *err)
{
    rn_predictor pr;
    rn_predictor_init(&pr, p);
    if (pp) rn_predictor_set_pose(&pr, pp);
    q->sk = pp ? rn_skeleton_find(pp->net->skeleton) : NULL;
    q->J = q->sk && q->sk->J == pp->net->K ? q->sk->J : 0;
    int rc = pp && !q->J ? rn_err_set(err, "the PoseNet's joint set '%s' is unknown", pp->net->skeleton)
                         : rn_predictor_run_pose(&pr, r, q->img, q->cam, info, in, err);
    rn_predictor_free(&pr);
    return rc;
}

/* Everything cheap first (flags, device, output names, the image), then the
 * snapshots, then the models. */
static int run_demo(const demo_cli *c, rn_err *err)
{
    double boxes[RN_PREDICT_MAX_BOXES][4];
    rn_predict_in in;
    /* with --json the picture is drawn only where asked (--output, --labels-json), never into the current folder */
    const char *out = c->out ? c->out : (!c->json || c->labels_json) ? "demo_output.png" : NULL;
    char out3d[4096];
    if (out) path_3d(out3d, sizeof out3d, out);
    if (fill_in(&in, boxes, c, err) || (out && rn_rgb_check_path(out, err))) return RN_EXIT_USAGE;
    if (check_image(c->image, err)) return RN_EXIT_FAIL;
    rn_params p, pp;
    rn_run_settings s;
    int lrc = rn_eval_load_nets(&p, &pp, &s, c->snapshot, c->pose_snapshot, &c->ev, err);
    if (lrc) return lrc;
    in.input_size = s.input_size;
    in.fast_decode = s.fast_decode;
    if (!c->json) {
        printf("demo: %s (ResNet-%d), input %d %s\n", c->snapshot, p.depth, in.input_size, rn_run_settings_size_note(&s));
        if (c->pose_snapshot)
            printf("demo: %s (PoseNet, ResNet-%d, %d joints of %s)\n", c->pose_snapshot, pp.depth, pp.net->K,
                   pp.net->skeleton);
    }
    rn_person_root r[RN_PREDICT_MAX_BOXES];
    rn_predict_info info;
    rn_calib cal;
    demo_pose *q = rn_xcalloc(1, sizeof *q);
    int rc = rn_eval_calib_load(&c->ev, c->snapshot, &in.precision, &cal, &in.calib, err)
                 ? -1
                 : predict(r, &info, q, &p, c->pose_snapshot ? &pp : NULL, &in, err);
    if (in.calib) rn_calib_free(&cal);
    rn_params_free(&p);
    if (c->pose_snapshot) rn_params_free(&pp);
    if (!rc) {
        warn_outside(c, r, in.n, &info);
        if (info.orientation > 1)
            fprintf(stderr, "rootnet demo: %s: EXIF orientation %d applied (as cv2.imread): %d x %d as displayed\n",
                    c->image, info.orientation, info.width, info.height);
        rc = out && write_image(c, out, out3d, r, in.n, &info, q, err);
    }
    const char *o3 = out && q->J ? out3d : NULL;
    if (!rc && c->json) print_json(r, in.n, &info, q, out, o3);
    else if (!rc) print_text(r, in.n, &info, q, out, o3);
    free(q);
    return rc ? RN_EXIT_FAIL : RN_EXIT_OK;
}

int rn_cmd_demo(int argc, char **argv)
{
    demo_cli c = {0};
    rn_flag flags[] = {
        RN_FLAG_STR("--snapshot", &c.snapshot, "weights: a rootnet snapshot (safetensors) or the authors' .pth.tar"),
        RN_FLAG_STR("--pose-snapshot", &c.pose_snapshot, "a PoseNet snapshot (rootnet's or the authors' .pth.tar): each "
                    "person's 3D joints too, placed at RootNet's root, and a second picture (OUT_3d.png)"),
        RN_FLAG_STR("--image", &c.image, "input image (JPEG or PNG)"),
        RN_FLAG_MULTI("--bbox", &c.bbox, "a person's box x,y,w,h in pixels (repeat for each person)"),
        RN_FLAG_STR("--bbox-format", &c.format, "xywh (default) or xyxy (x1,y1,x2,y2)"),
        RN_FLAG_STR("--focal", &c.focal, "fx,fy in pixels (default: 1500,1500, the authors' convention)"),
        RN_FLAG_STR("--princpt", &c.princpt, "cx,cy in pixels (default: the image centre)"),
        RN_FLAG_STR("--output", &c.out, "output image, .png or .jpg (default demo_output.png; with --json none unless given)"),
        RN_FLAG_BOOL("--json", &c.json, "print the roots as one JSON object"),
        RN_FLAG_STR("--labels-json", &c.labels_json, "also write where the picture's labels went (JSON; for checks)"),
        RN_EVAL_FLAGS(&c.ev),
        RN_FLAG_ALIAS("--weights", "--snapshot"),
        RN_FLAG_ALIAS("--out", "--output"),
        {0}};
    const char *syn = "--snapshot FILE [--pose-snapshot FILE] --image IMG --bbox x,y,w,h [--bbox ...] [--bbox-format xywh|xyxy] "
                      "[--focal fx,fy] [--princpt cx,cy] [--json] [--output OUT.png]";
    int h = rn_args_handle(flags, argc, argv, syn);
    if (h >= 0) return h;
    if (!c.snapshot || !c.image || !c.bbox.n)
        return rn_args_misuse(flags, argv, syn, "--snapshot, --image and at least one --bbox x,y,w,h are required");
    rn_err err = {{0}};
    int rc = run_demo(&c, &err);
    return rc ? rn_cli_fail("demo", rc, &err) : RN_EXIT_OK;
}
