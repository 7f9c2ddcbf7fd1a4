/* The C API's PoseNet calls from the command line, for tests/t_predict_pose.sh:
 *   capi_pose ROOTNET POSENET IMAGE x,y,w,h [x,y,w,h ...]
 * prints {"people": [{"root_cam": [X, Y, Z], "joints": [{"name", "img", "cam"}, ...]}, ...]} (all digits) from
 * rootnet_predict_pose_file at input 256, after the contract's checks (a PoseNet where a RootNet is expected and
 * the reverse, the call without a PoseNet, names and bones); a failed check is a "FAIL: ..." line and exit 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rootnet.h>

static int fails;

static void check(int ok, const char *what)
{
    if (!ok) fprintf(stderr, "FAIL: %s\n", what), fails++;
}

/* The contract around rootnet_set_pose on p (a RootNet's predictor, no PoseNet yet). */
static void contract(rootnet_predictor *p, const char *rootnet, const char *posenet, const char *image)
{
    rootnet_options o;
    rootnet_options_init(&o);
    o.input_size = 256;
    char msg[512];
    rootnet_predictor *q = NULL;
    check(rootnet_create(&q, posenet, &o, msg, sizeof msg) == ROOTNET_ERR_SNAPSHOT && strstr(msg, "PoseNet") && !q,
          "rootnet_create of a PoseNet: ROOTNET_ERR_SNAPSHOT naming it");
    rootnet_destroy(q);
    rootnet_box b = {200.5, 10, 90, 200};
    rootnet_root r;
    double ji[3 * 64], jc[3 * 64];
    check(rootnet_pose_joints(p) == 0 && rootnet_pose_joint_name(p, 0) == NULL && rootnet_pose_bones(p, NULL, 0) == 0,
          "no PoseNet: 0 joints, no names, no bones");
    check(rootnet_predict_pose_file(p, image, &b, 1, NULL, &r, ji, jc, NULL) == ROOTNET_ERR_ARGUMENT &&
              strstr(rootnet_last_error(p), "rootnet_set_pose"),
          "rootnet_predict_pose without a PoseNet: ROOTNET_ERR_ARGUMENT");
    check(rootnet_set_pose(p, rootnet) == ROOTNET_ERR_SNAPSHOT && strstr(rootnet_last_error(p), "RootNet") &&
              rootnet_pose_joints(p) == 0,
          "rootnet_set_pose of a RootNet: ROOTNET_ERR_SNAPSHOT, nothing attached");
    check(rootnet_set_pose(p, "/nonexistent/pose.safetensors") == ROOTNET_ERR_SNAPSHOT, "a missing PoseNet");
    check(rootnet_set_pose(NULL, posenet) == ROOTNET_ERR_ARGUMENT, "rootnet_set_pose(NULL)");
    check(rootnet_set_pose(p, posenet) == ROOTNET_OK && rootnet_set_pose(p, NULL) == ROOTNET_OK &&
              rootnet_pose_joints(p) == 0,
          "attach, then detach");
    check(rootnet_set_pose(p, posenet) == ROOTNET_OK, "rootnet_set_pose");
    int J = rootnet_pose_joints(p), pairs[2 * 64];
    int nb = rootnet_pose_bones(p, pairs, 64);
    check(J == 18 && !strcmp(rootnet_pose_joint_name(p, 0), "Pelvis") && rootnet_pose_joint_name(p, J) == NULL &&
              rootnet_pose_joint_name(p, -1) == NULL,
          "18 joints, Pelvis first");
    check(nb > 0 && nb <= 64 && pairs[0] >= 0 && pairs[0] < J && pairs[1] >= 0 && pairs[1] < J, "bones");
    check(rootnet_predict_pose_file(p, image, &b, 1, NULL, &r, NULL, jc, NULL) == ROOTNET_ERR_ARGUMENT,
          "joints_img NULL: ROOTNET_ERR_ARGUMENT");
}

static void print_people(const rootnet_predictor *p, const rootnet_root *r, const double *ji, const double *jc, int n)
{
    int J = rootnet_pose_joints(p);
    printf("{\"people\": [");
    for (int i = 0; i < n; i++) {
        printf("%s{\"root_cam\": [%.17g, %.17g, %.17g], \"joints\": [", i ? ", " : "", r[i].cam[0], r[i].cam[1],
               r[i].cam[2]);
        for (int j = 0; j < J; j++) {
            const double *a = ji + 3 * (i * J + j), *c = jc + 3 * (i * J + j);
            printf("%s{\"name\": \"%s\", \"img\": [%.17g, %.17g, %.17g], \"cam\": [%.17g, %.17g, %.17g]}", j ? ", " : "",
                   rootnet_pose_joint_name(p, j), a[0], a[1], a[2], c[0], c[1], c[2]);
        }
        printf("]}");
    }
    printf("]}\n");
}

int main(int argc, char **argv)
{
    enum { MAXB = 8 };
    rootnet_box b[MAXB];
    int n = argc - 4;
    for (int i = 0; i < n && i < MAXB; i++)
        if (sscanf(argv[4 + i], "%lf,%lf,%lf,%lf", &b[i].x, &b[i].y, &b[i].w, &b[i].h) != 4) n = -1;
    if (argc < 5 || n < 1 || n > MAXB) {
        fprintf(stderr, "usage: capi_pose ROOTNET POSENET IMAGE x,y,w,h [x,y,w,h ...]\n");
        return 2;
    }
    rootnet_options o;
    rootnet_options_init(&o);
    o.threads = 2;
    o.input_size = 256;
    char msg[512];
    rootnet_predictor *p;
    if (rootnet_create(&p, argv[1], &o, msg, sizeof msg)) {
        fprintf(stderr, "capi_pose: %s\n", msg);
        return 1;
    }
    contract(p, argv[1], argv[2], argv[3]);
    rootnet_root r[MAXB];
    double *ji = calloc((size_t)n * 3 * 64, sizeof *ji), *jc = calloc((size_t)n * 3 * 64, sizeof *jc);
    rootnet_status st = rootnet_api_version() >= 2 && rootnet_pose_joints(p) > 0
                            ? rootnet_predict_pose_file(p, argv[3], b, n, NULL, r, ji, jc, NULL)
                            : ROOTNET_ERR_ARGUMENT;
    if (st) fprintf(stderr, "capi_pose: %s\n", rootnet_last_error(p));
    else print_people(p, r, ji, jc, n);
    rootnet_destroy(p);
    free(ji), free(jc);
    return st || fails ? 1 : 0;
}
