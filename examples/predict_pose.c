/* predict_pose: an example program of rootnet's C API (include/rootnet.h) with a PoseNet: each boxed person's
 * 3D joints in one image, PoseNet's pose placed at RootNet's root (rootnet predict --pose-snapshot's numbers
 * for the same boxes and focal).
 *
 *   cc predict_pose.c $(pkg-config --cflags --libs rootnet) -o predict_pose
 *   ./predict_pose ROOTNET POSENET IMAGE x,y,w,h [x,y,w,h ...]
 *
 * One line per joint: "person I JOINT img X Y DEPTH cam X Y Z" (pixels, mm); exit 0, or 1 with one line on
 * stderr saying what failed.
 */
#include <stdio.h>
#include <stdlib.h>

#include <rootnet.h>

#define MAX_BOXES 64

int main(int argc, char **argv)
{
    rootnet_box b[MAX_BOXES];
    int n = argc - 4;
    if (argc < 5 || n > MAX_BOXES) {
        fprintf(stderr, "usage: predict_pose ROOTNET POSENET IMAGE x,y,w,h [x,y,w,h ...]\n");
        return 1;
    }
    for (int i = 0; i < n; i++)
        if (sscanf(argv[4 + i], "%lf,%lf,%lf,%lf", &b[i].x, &b[i].y, &b[i].w, &b[i].h) != 4) {
            fprintf(stderr, "predict_pose: box '%s': expected x,y,w,h\n", argv[4 + i]);
            return 1;
        }
    char msg[512];
    rootnet_predictor *p;
    if (rootnet_api_version() < 2) return fprintf(stderr, "predict_pose: librootnet too old (API 2 needed)\n"), 1;
    if (rootnet_create(&p, argv[1], NULL, msg, sizeof msg)) return fprintf(stderr, "predict_pose: %s\n", msg), 1;
    rootnet_root roots[MAX_BOXES];
    double *img = NULL, *cam = NULL;
    int J = 0;
    rootnet_status st = rootnet_set_pose(p, argv[2]);
    if (!st) {
        J = rootnet_pose_joints(p);
        img = malloc(sizeof *img * (size_t)n * (size_t)J * 3), cam = malloc(sizeof *cam * (size_t)n * (size_t)J * 3);
        st = rootnet_predict_pose_file(p, argv[3], b, n, NULL, roots, img, cam, NULL);
    }
    if (st) fprintf(stderr, "predict_pose: %s\n", rootnet_last_error(p));
    for (int i = 0; !st && i < n; i++)
        for (int j = 0; j < J; j++) {
            const double *a = img + 3 * (i * J + j), *c = cam + 3 * (i * J + j);
            printf("person %d %s img %.2f %.2f %.1f cam %.1f %.1f %.1f\n", i + 1, rootnet_pose_joint_name(p, j), a[0],
                   a[1], a[2], c[0], c[1], c[2]);
        }
    free(img), free(cam);
    rootnet_destroy(p);
    return st ? 1 : 0;
}
