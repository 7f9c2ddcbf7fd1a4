/* predict_roots: an example program of rootnet's C API (include/rootnet.h).
 * One predictor runs over several JPEGs, each decoded here with libjpeg and
 * given to it as pixels with its boxes; each person's root is printed.
 *
 *   cc predict_roots.c $(pkg-config --cflags --libs rootnet) -ljpeg -o predict_roots
 *   ./predict_roots SNAPSHOT [--threads N] --image A.jpg [--focal fx,fy] [--princpt cx,cy] x,y,w,h [x,y,w,h ...] \
 *                                          [--image B.jpg ...]
 *
 * One line per person: "A.jpg person I: root_img X Y DEPTH root_cam X Y Z"
 * (pixels, mm, all digits); exit 0, or 1 with one line on stderr saying what failed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include <rootnet.h>

#define MAX_BOXES 64

typedef struct jpeg_fail {
    struct jpeg_error_mgr mgr;
    jmp_buf jump;
    char msg[JMSG_LENGTH_MAX];
} jpeg_fail;

static void on_jpeg_error(j_common_ptr ci)
{
    jpeg_fail *f = (jpeg_fail *)ci->err;
    f->mgr.format_message(ci, f->msg);
    longjmp(f->jump, 1);
}

/* Decodes path into a malloc'ed RGB8 buffer (*rgb, rows 3 * width bytes). */
static int decode_jpeg(unsigned char **rgb, int *width, int *height, const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        fprintf(stderr, "predict_roots: %s: %s\n", path, strerror(errno));
        return -1;
    }
    struct jpeg_decompress_struct ci;
    jpeg_fail fail;
    unsigned char *volatile px = NULL;
    ci.err = jpeg_std_error(&fail.mgr);
    fail.mgr.error_exit = on_jpeg_error;
    if (setjmp(fail.jump)) {
        fprintf(stderr, "predict_roots: %s: %s\n", path, fail.msg);
        jpeg_destroy_decompress(&ci);
        fclose(fp);
        free(px);
        return -1;
    }
    jpeg_create_decompress(&ci);
    jpeg_stdio_src(&ci, fp);
    jpeg_read_header(&ci, TRUE);
    ci.out_color_space = JCS_RGB;
    jpeg_start_decompress(&ci);
    size_t stride = (size_t)3 * ci.output_width;
    px = malloc(stride * ci.output_height);
    if (!px) {
        fprintf(stderr, "predict_roots: %s: out of memory\n", path);
        jpeg_destroy_decompress(&ci);
        fclose(fp);
        return -1;
    }
    while (ci.output_scanline < ci.output_height) {
        JSAMPROW row = px + stride * ci.output_scanline;
        jpeg_read_scanlines(&ci, &row, 1);
    }
    jpeg_finish_decompress(&ci);
    *rgb = px, *width = (int)ci.output_width, *height = (int)ci.output_height;
    jpeg_destroy_decompress(&ci);
    fclose(fp);
    return 0;
}

static int parse_pair(double v[2], const char *s)
{
    char *end;
    v[0] = strtod(s, &end);
    if (*end != ',') return -1;
    v[1] = strtod(end + 1, &end);
    return *end ? -1 : 0;
}

static int parse_box(rootnet_box *b, const char *s)
{
    char *end;
    double v[4];
    for (int i = 0; i < 4; i++) {
        v[i] = strtod(s, &end);
        if (end == s || *end != (i < 3 ? ',' : '\0')) return -1;
        s = end + 1;
    }
    *b = (rootnet_box){v[0], v[1], v[2], v[3]};
    return 0;
}

/* One image and its people. */
typedef struct job {
    const char *image;
    rootnet_camera cam;
    int have_cam, n;
    rootnet_box boxes[MAX_BOXES];
} job;

/* argv[i..) up to the next --image: [--focal fx,fy] [--princpt cx,cy] x,y,w,h ... Returns the next index or -1. */
static int parse_job(job *j, int argc, char **argv, int i)
{
    for (; i < argc && strcmp(argv[i], "--image"); i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--focal") && v) {
            if (parse_pair(j->cam.focal, v)) return -1;
            j->have_cam = 1, i++;
        } else if (!strcmp(argv[i], "--princpt") && v) {
            if (parse_pair(j->cam.princpt, v)) return -1;
            j->have_cam = j->cam.has_princpt = 1, i++;
        } else if (j->n == MAX_BOXES || parse_box(&j->boxes[j->n++], argv[i])) {
            return -1;
        }
    }
    return j->n ? i : -1;
}

/* Decodes the image, predicts, prints; 0 or -1 (said on stderr). */
static int run_job(rootnet_predictor *p, const job *j)
{
    unsigned char *rgb;
    int w, h;
    if (decode_jpeg(&rgb, &w, &h, j->image)) return -1;
    rootnet_image img = {.rgb = rgb, .width = w, .height = h, .stride = (size_t)3 * w};
    rootnet_root roots[MAX_BOXES];
    rootnet_info info;
    int rc = rootnet_predict(p, &img, j->boxes, j->n, j->have_cam ? &j->cam : NULL, roots, &info);
    free(rgb);
    if (rc) {
        fprintf(stderr, "predict_roots: %s: %s\n", j->image, rootnet_last_error(p));
        return -1;
    }
    for (int i = 0; i < j->n; i++)
        printf("%s person %d: root_img %.17g %.17g %.17g root_cam %.17g %.17g %.17g\n", j->image, i + 1,
               roots[i].img[0], roots[i].img[1], roots[i].img[2], roots[i].cam[0], roots[i].cam[1], roots[i].cam[2]);
    if (info.default_focal)
        fprintf(stderr, "predict_roots: %s: no focal given, the authors' 1500 px was used; depth scales with "
                "sqrt(fx * fy) / 1500\n", j->image);
    return 0;
}

int main(int argc, char **argv)
{
    rootnet_options o;
    rootnet_options_init(&o);
    int i = 2;
    if (argc > 3 && !strcmp(argv[2], "--threads")) o.threads = atoi(argv[3]), i = 4;
    if (argc < i + 3 || strcmp(argv[i], "--image")) {
        fprintf(stderr, "usage: %s SNAPSHOT [--threads N] --image A.jpg [--focal fx,fy] [--princpt cx,cy] x,y,w,h ... "
                "[--image B.jpg ...]\n", argv[0]);
        return 1;
    }
    char msg[512];
    rootnet_predictor *p;
    if (rootnet_create(&p, argv[1], &o, msg, sizeof msg)) {
        fprintf(stderr, "predict_roots: %s\n", msg);
        return 1;
    }
    int rc = 0;
    while (!rc && i < argc) {
        job j = {.image = argv[i + 1]};
        int next = i + 2 <= argc ? parse_job(&j, argc, argv, i + 2) : -1;
        if (next < 0) {
            fprintf(stderr, "predict_roots: after --image %s: expected [--focal fx,fy] [--princpt cx,cy] and "
                    "boxes x,y,w,h\n", i + 1 < argc ? argv[i + 1] : "(nothing)");
            rc = 1;
        } else {
            rc = run_job(p, &j) ? 1 : 0;
            i = next;
        }
    }
    rootnet_destroy(p);
    return rc;
}
