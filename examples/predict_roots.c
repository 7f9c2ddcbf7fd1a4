/* predict_roots: an example program of rootnet's C API (include/rootnet.h).
 * One predictor runs over several images (JPEG or PNG), each loaded by the
 * library as rootnet predict loads it (rootnet_predict_file: EXIF orientation
 * applied, the EXIF focal where no --focal is given), with its boxes; each
 * person's root is printed: predict's numbers for the same boxes.
 *
 *   cc predict_roots.c $(pkg-config --cflags --libs rootnet) -o predict_roots
 *   ./predict_roots SNAPSHOT [--threads N] --image A.jpg [--focal fx,fy] [--princpt cx,cy] x,y,w,h [x,y,w,h ...] \
 *                                          [--image B.jpg ...]
 *
 * One line per person: "A.jpg person I: root_img X Y DEPTH root_cam X Y Z"
 * (pixels, mm, all digits); exit 0, or 1 with one line on stderr saying what failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rootnet.h>

#define MAX_BOXES 64

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

/* Loads the image (as rootnet predict: EXIF orientation, EXIF focal), predicts, prints; 0 or -1 (said on stderr).
 * A program that has the pixels already gives them to rootnet_predict as a rootnet_image instead. */
static int run_job(rootnet_predictor *p, const job *j)
{
    rootnet_root roots[MAX_BOXES];
    rootnet_info info;
    int rc = rootnet_predict_file(p, j->image, j->boxes, j->n, j->have_cam ? &j->cam : NULL, roots, &info);
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
