/* rootnet predict: records -> loader (worker threads) -> eval forward -> roots -> JSON + CSV. */
#include "infer/predict_set.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "core/afile.h"
#include "core/profile.h"
#include "data/load/loader.h"
#include "eval/metrics.h"
#include "eval/results.h"
#include "infer/infer_model.h"
#include "infer/predict.h"
#include "infer/predict_inputs.h"
#include "infer/tester.h"
#include "io/file.h"
#include "data/sets/skeleton.h"
#include "nn/model.h"
#include "nn/net.h"
#include "viz/people.h"

void rn_pset_opts_default(rn_pset_opts *o)
{
    *o = (rn_pset_opts){.input_size = 256, .batch = 16, .workers = 1, .precision = RN_PREC_FP32, .progress = 1,
                        .log_every = 100, .log = stderr};
}

typedef struct run_state {
    rn_pin *in;
    rn_root_pred *pred; /* (n) */
    uint8_t *ok;        /* (n) */
    double (*img)[3];   /* (n) root x, y (px), depth (mm) */
    rn_params *pose;    /* PoseNet, or NULL */
    int J;              /* its joints */
    const char *const *names; /* the J joints' names */
    double *jimg, *jcam;/* (n, J, 3): joints x, y (px), depth (mm); camera X, Y, Z (mm) */
    size_t images_todo, images_done, people_done, people_at_line;
    double t0;
    int tty;
} run_state;

static void progress(run_state *r, int final)
{
    const rn_pset_opts *o = r->in->o;
    if (!o->progress || !o->log) return;
    double dt = rn_prof_now() - r->t0, rate = dt > 0 ? (double)r->people_done / dt : 0.0;
    if (r->tty) {
        const int width = 30;
        int fill = r->in->n ? (int)((double)width * (double)r->people_done / (double)r->in->n) : width;
        char bar[64];
        for (int i = 0; i < width; i++) bar[i] = i < fill ? '=' : (i == fill ? '>' : ' ');
        bar[width] = '\0';
        fprintf(o->log, "\rpredict [%s] %zu/%zu images  %zu/%zu people  %.1f people/s", bar, r->images_done,
                r->images_todo, r->people_done, r->in->n, rate);
        if (final) fputc('\n', o->log);
    } else if (!final) {
        fprintf(o->log, "predict: %zu/%zu images, %zu/%zu people, %.1f people/s\n", r->images_done, r->images_todo,
                r->people_done, r->in->n, rate);
        r->people_at_line = r->people_done;
    }
    fflush(o->log);
}

/* Record rec's joints from PoseNet's rows (pm's row i), placed at the root root_img. */
static void take_pose(run_state *r, size_t rec, const rn_sample *s, const rn_model *pm, int i, const double root_img[3])
{
    const double f[2] = {s->f[0], s->f[1]}, c[2] = {s->c[0], s->c[1]};
    rn_predict_place_pose(r->jimg + rec * 3 * (size_t)r->J, r->jcam + rec * 3 * (size_t)r->J, pm, i, s->bbox,
                          root_img[2], f, c);
}

static void take_batch(run_state *r, const rn_batch *b, const rn_model *m, const rn_model *pm)
{
    rn_pin *in = r->in;
    const rn_pset_opts *o = in->o;
    for (int i = 0; i < b->n; i++) {
        size_t rec = (size_t)b->sample[i];
        RN_ASSERT(rec < in->n);
        const rn_sample *s = &in->samples[rec];
        rn_pimage *im = &in->img[s->subject];
        if (b->bad[i]) {
            if (!im->failed) rn_pin_skip(in, RN_PSKIP_IMAGE, 0, "%s", b->why[i]);
            im->failed = 1;
            in->s->skip[RN_PSKIP_IMAGE]++;
        } else {
            double root_img[3];
            rn_eval_output_to_image(root_img, m->coord + 3 * i, s->bbox, m->OW, m->OH);
            rn_eval_pred_from_sample(&r->pred[rec], s, root_img);
            memcpy(r->img[rec], root_img, sizeof root_img);
            if (pm) take_pose(r, rec, s, pm, i, root_img);
            r->ok[rec] = 1;
        }
        r->people_done++;
        RN_ASSERT(im->left > 0);
        int line = 0;
        if (--im->left == 0) r->images_done++, line = r->images_done % (size_t)(o->log_every > 0 ? o->log_every : 1) == 0;
        /* an image of many people: a line every 10 x log_every people as well */
        line |= r->people_done - r->people_at_line >= 10 * (size_t)o->log_every;
        if (!r->tty && o->log_every > 0 && line) progress(r, 0);
    }
    if (r->tty) progress(r, 0);
}

static int forward_all(run_state *r, rn_params *p, rn_err *err)
{
    rn_pin *in = r->in;
    const rn_pset_opts *o = in->o;
    int S = o->input_size, N = o->batch < (int)in->n ? o->batch : (int)in->n;
    rn_dataset ds = {.samples = in->samples, .n = in->n, .strings = in->strings, .strings_len = in->strings_len,
                     .bbox_real = {2000.0f, 2000.0f}};
    snprintf(ds.name, sizeof ds.name, "predict");
    const rn_dataset *sets[1] = {&ds};
    rn_loader_cfg cfg;
    rn_loader_cfg_eval(&cfg, sets, N, o->workers, S, o->fast_decode);
    cfg.keep_going = 1;
    cfg.quiet = 1;
    cfg.crop.exif_orient = 1;
    rn_model m, pm;
    rn_infer_cfg c = {.base = {.device = o->device, .threads = o->threads}, .precision = o->precision,
                      .fold = !o->no_fold, .batch = N, .h = S, .w = S, .calib = o->calib, .observe = o->observe};
    if (rn_infer_model_open(&m, p, &c, err)) return -1;
    /* PoseNet in int8 would need its own calibration: it runs in fp32 beside an int8 RootNet, unobserved */
    rn_infer_cfg pc = c;
    if (pc.precision == RN_PREC_INT8) pc.precision = RN_PREC_FP32, pc.calib = NULL;
    pc.observe = (rn_model_observe){0};
    if (r->pose && rn_infer_model_open(&pm, r->pose, &pc, err)) {
        rn_model_destroy(&m);
        return -1;
    }
    rn_loader *ld = NULL;
    int rc = rn_loader_create(&ld, &cfg, err);
    if (!rc) rc = rn_loader_start(ld, 0, 0, err);
    const rn_batch *b;
    while (!rc && !(o->stop && *o->stop) && (rc = rn_loader_next(ld, &b, err)) == 1) {
        rn_test_forward_batch(&m, b);
        if (r->pose) rn_test_forward_batch(&pm, b); /* the same crops; PoseNet takes no k */
        take_batch(r, b, &m, r->pose ? &pm : NULL);
        rc = 0;
    }
    in->s->interrupted = !rc && o->stop && *o->stop && r->people_done < in->n;
    if (r->tty) progress(r, 1);
    if (ld) rn_loader_free(ld);
    rn_model_destroy(&m);
    if (r->pose) rn_model_destroy(&pm);
    return rc < 0 ? -1 : 0;
}

/* ",v" in the fewest significant digits that read back as v (as a float when is_float: v holds one), without an
 * exponent between 1e-5 and 1e17. */
static void put_num(FILE *f, double v, int is_float)
{
    char b[40];
    for (int p = 1; p <= 17; p++) {
        snprintf(b, sizeof b, "%.*g", p, v);
        if (strchr(b, 'e') && fabs(v) >= 1e-5 && fabs(v) < 1e17 && p < 17) continue; /* 700, not 7e+02 */
        double back = strtod(b, NULL);
        if (is_float ? (float)back == (float)v : back == v) break;
    }
    fprintf(f, ",%s", b);
}

/* The CSV's bytes into *buf (len bytes; free() it). */
static int encode_csv(char **out, size_t *out_len, const char *path, const rn_pin *in, const run_state *r, rn_err *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return rn_err_set(err, "%s: out of memory", path);
    fprintf(f, "file,image_id,score,bbox_x,bbox_y,bbox_w,bbox_h,root_x_px,root_y_px,depth_mm,cam_x_mm,cam_y_mm,"
               "cam_z_mm,fx,fy,cx,cy,focal_source,det_index,det_x,det_y,det_w,det_h");
    for (int j = 0; j < r->J; j++)
        fprintf(f, ",%s_x_px,%s_y_px,%s_depth_mm,%s_cam_x_mm,%s_cam_y_mm,%s_cam_z_mm", r->names[j], r->names[j],
                r->names[j], r->names[j], r->names[j], r->names[j]);
    fputc('\n', f);
    for (size_t i = 0; i < in->n; i++) {
        if (!r->ok[i]) continue;
        const rn_sample *s = &in->samples[i];
        const rn_root_pred *q = &r->pred[i];
        const rn_pimage *im = &in->img[s->subject];
        fputc('"', f);
        for (const char *c = im->name; *c; c++) fputs(*c == '"' ? "\"\"" : (char[2]){*c, 0}, f);
        fprintf(f, "\",%lld", (long long)q->image_id);
        /* float32 values (score, intrinsics) and float64 ones (box after process_bbox, as the JSON and demo have
         * it; roots), each in the fewest digits that read back as it: the user's 222.39 stays 222.39 */
        put_num(f, q->score, 1);
        const double db[10] = {q->bbox[0],   q->bbox[1],   q->bbox[2],      q->bbox[3],      r->img[i][0],
                               r->img[i][1], r->img[i][2], q->root_cam[0], q->root_cam[1], q->root_cam[2]};
        for (int k = 0; k < 10; k++) put_num(f, db[k], 0);
        const double in4[4] = {s->f[0], s->f[1], s->c[0], s->c[1]};
        for (int k = 0; k < 4; k++) put_num(f, in4[k], 1);
        fprintf(f, ",%s,%lld", im->src, (long long)in->det_index[i]);
        for (int k = 0; k < 4; k++) put_num(f, in->det[i][k], 0);
        for (int j = 0; j < r->J; j++) {
            size_t at = 3 * (i * (size_t)r->J + (size_t)j);
            for (int k = 0; k < 3; k++) put_num(f, r->jimg[at + k], 0);
            for (int k = 0; k < 3; k++) put_num(f, r->jcam[at + k], 0);
        }
        fputc('\n', f);
    }
    fclose(f);
    *out = buf, *out_len = len;
    return 0;
}

/* The JSON and the CSV written and fsync'd, then both renamed into place: replaced together or not at all. */
static int write_pair(const rn_pset_summary *s, const char *json, size_t json_n, const char *csv, size_t csv_n,
                      rn_err *err)
{
    rn_afile a, b;
    if (rn_afile_open(&a, s->json_path, err)) return -1;
    if (rn_afile_open(&b, s->csv_path, err)) {
        rn_afile_abort(&a);
        return -1;
    }
    if (rn_afile_write(&a, json, json_n, err) || rn_afile_write(&b, csv, csv_n, err)) {
        rn_afile_abort(&a), rn_afile_abort(&b);
        return -1;
    }
    return rn_afile_commit_pair(&a, &b, err);
}

static int write_outputs(rn_pset_summary *s, const rn_pin *in, const run_state *r, rn_err *err)
{
    const char *dir = in->o->output ? in->o->output : ".";
    if (rn_mkdirs(dir, err)) return -1;
    int a = snprintf(s->json_path, sizeof s->json_path, "%s/bbox_root_output.json", dir);
    int b = snprintf(s->csv_path, sizeof s->csv_path, "%s/bbox_root_output.csv", dir);
    if (a < 0 || b < 0 || (size_t)a >= sizeof s->json_path || (size_t)b >= sizeof s->csv_path)
        return rn_err_set(err, "--output '%s': path too long", dir);
    rn_root_pred *kept = rn_xcalloc(in->n ? in->n : 1, sizeof *kept);
    rn_det_ref *det = rn_xcalloc(in->n ? in->n : 1, sizeof *det);
    size_t n = 0, J3 = 3 * (size_t)r->J;
    double *jimg = rn_xcalloc(in->n * J3 + 1, sizeof *jimg), *jcam = rn_xcalloc(in->n * J3 + 1, sizeof *jcam);
    for (size_t i = 0; i < in->n; i++) {
        if (!r->ok[i]) continue;
        memcpy(det[n].box, in->det[i], sizeof det[n].box);
        det[n].index = in->det_index[i];
        if (J3) memcpy(jimg + n * J3, r->jimg + i * J3, J3 * sizeof *jimg);
        if (J3) memcpy(jcam + n * J3, r->jcam + i * J3, J3 * sizeof *jcam);
        kept[n++] = r->pred[i];
    }
    rn_pose_rows pose = {r->J, r->names, jimg, jcam};
    s->people = n;
    s->people_total = in->n;
    char *json = NULL, *csv = NULL;
    size_t json_n = 0, csv_n = 0;
    int rc = rn_eval_results_encode_pose(&json, &json_n, s->json_path, RN_EVAL_MUPOTS, kept, det,
                                         r->pose ? &pose : NULL, n, err) ||
             encode_csv(&csv, &csv_n, s->csv_path, in, r, err) || write_pair(s, json, json_n, csv, csv_n, err);
    free(kept), free(det), free(json), free(csv), free(jimg), free(jcam);
    return rc ? -1 : 0;
}

static int check_opts(const rn_pset_opts *o, rn_err *err)
{
    if (!o->boxes) return rn_err_set(err, "no boxes file given");
    if (o->batch < 1 || o->batch > 4096) return rn_err_set(err, "batch %d: must be 1..4096", o->batch);
    if (o->workers < 1 || o->workers > 64) return rn_err_set(err, "workers %d: must be 1..64", o->workers);
    if (!isfinite(o->score_thr)) return rn_err_set(err, "score threshold must be a finite number");
    return 0;
}

/* Image name's length without its extension (.jpg, .jpeg, .png, any case; none: the whole name). */
static size_t stem_len(const char *name)
{
    const char *dot = strrchr(name, '.'), *slash = strrchr(name, '/');
    if (!dot || (slash && dot < slash)) return strlen(name);
    return !strcasecmp(dot, ".jpg") || !strcasecmp(dot, ".jpeg") || !strcasecmp(dot, ".png") ? (size_t)(dot - name)
                                                                                             : strlen(name);
}

/* 1 when another image drawn has the same stem as image i (a.jpg beside a.png): then the full names are used. */
static int stem_shared(const rn_pin *in, size_t i)
{
    const char *a = in->img[i].name;
    size_t n = stem_len(a);
    for (size_t j = 0; j < in->n_img; j++)
        if (j != i && in->img[j].state > 0 && stem_len(in->img[j].name) == n && !strncmp(in->img[j].name, a, n))
            return 1;
    return 0;
}

/* The picture's path: draw/<image name less its extension, '/' as '_'><suffix>.png (the full name where two
 * images share a stem). */
static void picture_path(char *out, size_t cap, const rn_pin *in, size_t im_index, const char *suffix)
{
    const rn_pimage *im = &in->img[im_index];
    int len = snprintf(out, cap, "%s/", in->o->draw);
    size_t keep = stem_shared(in, im_index) ? strlen(im->name) : stem_len(im->name);
    for (size_t k = 0; k < keep && len < (int)cap - 16; k++) out[len++] = im->name[k] == '/' ? '_' : im->name[k];
    snprintf(out + len, cap - (size_t)len, "%s.png", suffix);
}

/* Image im_index's people (at most RN_PREDICT_MAX_BOXES) into people, and with a PoseNet their joints into jimg,
 * jcam ((RN_PREDICT_MAX_BOXES, J, 3) each). Returns how many. */
static int gather_people(const rn_pin *in, const run_state *r, size_t im_index, rn_person_root *people, double *jimg,
                         double *jcam)
{
    int n = 0;
    size_t J3 = 3 * (size_t)r->J;
    for (size_t i = 0; i < in->n && n < RN_PREDICT_MAX_BOXES; i++) {
        if (!r->ok[i] || (size_t)in->samples[i].subject != im_index) continue;
        if (r->pose) memcpy(jimg + (size_t)n * J3, r->jimg + i * J3, J3 * sizeof *jimg);
        if (r->pose) memcpy(jcam + (size_t)n * J3, r->jcam + i * J3, J3 * sizeof *jcam);
        rn_person_root *q = &people[n++];
        memcpy(q->box, in->det[i], sizeof q->box);
        for (int j = 0; j < 4; j++) q->bbox[j] = r->pred[i].bbox[j];
        for (int j = 0; j < 3; j++) q->img[j] = r->img[i][j], q->cam[j] = r->pred[i].root_cam[j];
        q->k = in->samples[i].k;
    }
    return n;
}

/* demo's picture of image im's people (draw/<stem>.png), and with a PoseNet their 3D view (<stem>_3d.png). */
static void draw_image(const rn_pin *in, const run_state *r, size_t im_index, rn_person_root *people, double *jimg,
                       double *jcam)
{
    const rn_pimage *im = &in->img[im_index];
    int n = gather_people(in, r, im_index, people, jimg, jcam);
    if (!n) return;
    rn_predict_info info = {.width = im->w, .height = im->h, .f = {im->f[0], im->f[1]}, .c = {im->c[0], im->c[1]},
                            .default_focal = !strcmp(im->src, "default"), .default_c = !im->have_c};
    const rn_skeleton *sk = r->pose ? rn_skeleton_find(r->pose->net->skeleton) : NULL;
    rn_people_pose pose = {r->J, r->names, sk ? sk->bones : NULL, sk ? sk->nbones : 0, jimg, jcam};
    char out[8192];
    picture_path(out, sizeof out, in, im_index, "");
    rn_err e = {{0}};
    if (rn_draw_people_file(im->path, people, n, r->pose ? &pose : NULL, &info, out, NULL, NULL, &e) && in->o->log)
        fprintf(in->o->log, "rootnet predict: warning: no picture of %s: %s\n", im->name, e.msg);
    if (!r->pose) return;
    picture_path(out, sizeof out, in, im_index, "_3d");
    if (rn_draw_people_3d(&pose, n, &info, out, &e) && in->o->log)
        fprintf(in->o->log, "rootnet predict: warning: no 3D picture of %s: %s\n", im->name, e.msg);
}

static void draw_all(const rn_pin *in, const run_state *r)
{
    rn_person_root *people = rn_xmalloc(RN_PREDICT_MAX_BOXES * sizeof *people);
    size_t nj = RN_PREDICT_MAX_BOXES * 3 * (size_t)r->J + 1;
    double *jimg = rn_xmalloc(nj * sizeof *jimg), *jcam = rn_xmalloc(nj * sizeof *jcam);
    for (size_t i = 0; i < in->n_img; i++)
        if (in->img[i].state > 0) draw_image(in, r, i, people, jimg, jcam);
    free(people), free(jimg), free(jcam);
}

struct rn_pset {
    rn_pset_opts o; /* the caller's, copied (in.o points here) */
    rn_pin in;
    run_state r;
};

int rn_pset_open(rn_pset **out, rn_pset_summary *s, const rn_pset_opts *o, rn_err *err)
{
    *out = NULL;
    memset(s, 0, sizeof *s);
    if (check_opts(o, err)) return -1;
    rn_pset *ps = rn_xcalloc(1, sizeof *ps);
    ps->o = *o;
    ps->r = (run_state){.in = &ps->in, .t0 = rn_prof_now(), .tty = o->log && isatty(fileno(o->log))};
    rn_pin_init(&ps->in, &ps->o, s);
    if (rn_pin_boxes(&ps->in, err) || rn_mkdirs(o->output ? o->output : ".", err) || (o->draw && rn_mkdirs(o->draw, err))) {
        rn_pset_close(ps);
        return -1;
    }
    *out = ps;
    return 0;
}

int rn_pset_predict(rn_pset *ps, rn_params *p, int input_size, int fast_decode, rn_err *err)
{
    if (input_size < 32 || input_size % 32)
        return rn_err_set(err, "input size %d: must be a positive multiple of 32", input_size);
    ps->o.input_size = input_size;
    ps->o.fast_decode = fast_decode;
    rn_pin *in = &ps->in;
    run_state *r = &ps->r;
    rn_pset_summary *s = in->s;
    r->pred = rn_xcalloc(in->n ? in->n : 1, sizeof *r->pred);
    r->ok = rn_xcalloc(in->n ? in->n : 1, 1);
    r->img = rn_xcalloc(in->n ? in->n : 1, sizeof *r->img);
    if (r->pose) {
        r->jimg = rn_xcalloc(in->n * 3 * (size_t)r->J + 1, sizeof *r->jimg);
        r->jcam = rn_xcalloc(in->n * 3 * (size_t)r->J + 1, sizeof *r->jcam);
    }
    for (size_t i = 0; i < in->n_img; i++) {
        in->img[i].left = in->img[i].people;
        r->images_todo += in->img[i].people > 0;
    }
    int rc = in->n ? forward_all(r, p, err) : 0;
    if (!rc) rc = write_outputs(s, in, r, err);
    if (!rc && ps->o.draw) draw_all(in, r);
    for (size_t i = 0; !rc && i < in->n; i++)
        if (r->ok[i] && in->img[in->samples[i].subject].people) in->img[in->samples[i].subject].people = 0, s->images_used++;
    s->seconds = rn_prof_now() - r->t0;
    return rc;
}

void rn_pset_set_pose(rn_pset *ps, rn_params *pose)
{
    const rn_skeleton *sk = pose ? rn_skeleton_find(pose->net->skeleton) : NULL;
    ps->r.pose = sk ? pose : NULL;
    ps->r.J = sk ? sk->J : 0;
    ps->r.names = sk ? sk->joints : NULL;
}

void rn_pset_close(rn_pset *ps)
{
    if (!ps) return;
    free(ps->r.pred);
    free(ps->r.ok);
    free(ps->r.img);
    free(ps->r.jimg);
    free(ps->r.jcam);
    rn_pin_free(&ps->in);
    free(ps);
}

int rn_pset_run(rn_pset_summary *s, rn_params *p, const rn_pset_opts *o, rn_err *err)
{
    rn_pset *ps;
    if (rn_pset_open(&ps, s, o, err)) return -1;
    int rc = rn_pset_predict(ps, p, o->input_size, o->fast_decode, err);
    rn_pset_close(ps);
    return rc;
}

static const char *plural(size_t n, const char *one, const char *many) { return n == 1 ? one : many; }

void rn_pset_summary_print(FILE *f, const rn_pset_summary *s)
{
    fprintf(f, "predict: %zu %s (%zu with people), %zu %s, %zu %s in %.1f s\n", s->images,
            plural(s->images, "image", "images"), s->images_used, s->detections,
            plural(s->detections, "detection", "detections"), s->people, plural(s->people, "person", "people"),
            s->seconds);
    for (int i = 0; i < RN_PSKIP_N; i++)
        if (s->skip[i] && i != RN_PSKIP_EXIF) fprintf(f, "predict: skipped %zu: %s\n", s->skip[i], rn_pskip_name((rn_pskip)i));
    if (s->skip[RN_PSKIP_EXIF])
        fprintf(f, "predict: warning: %zu %s a broken EXIF, kept: focal 1500 px unless given, and no orientation where "
                   "none could be read (the warnings above name them)\n", s->skip[RN_PSKIP_EXIF],
                plural(s->skip[RN_PSKIP_EXIF], "image had", "images had"));
    if (s->images_default_focal)
        fprintf(f, "predict: warning: %zu %s no focal (no --focal, --intrinsics, images-file or EXIF entry), so "
                   "the authors' focal 1500 px was used: their depth is right only for that focal; with the true focal "
                   "fx, fy, depth_true = depth * sqrt(fx * fy) / 1500 (X, Y scale the same way)\n",
                s->images_default_focal,
                plural(s->images_default_focal, "image had", "images had"));
    if (s->images_oriented)
        fprintf(f, "predict: %zu %s turned upright by their EXIF orientation (as cv2.imread); boxes and "
                   "principal points are in their upright pixels\n", s->images_oriented,
                plural(s->images_oriented, "image", "images"));
    if (s->boxes_maybe_xyxy)
        fprintf(f, "predict: warning: %zu %s read as x,y,w,h run well past their image (by over 10 %% of its side "
                   "or half the box's): if the detector wrote x1,y1,x2,y2, add --bbox-format xyxy\n",
                s->boxes_maybe_xyxy, plural(s->boxes_maybe_xyxy, "box", "boxes"));
    if (s->json_path[0]) fprintf(f, "predict: wrote %s and %s\n", s->json_path, s->csv_path);
    if (s->interrupted)
        fprintf(f, "predict: interrupted: the outputs hold the %zu %s finished of %zu; run again for the rest\n",
                s->people, plural(s->people, "person", "people"), s->people_total);
}
