/* rootnet_predict_file from the command line, for tests/t_capi_file.sh:
 *   capi_file SNAPSHOT IMAGE x,y,w,h   ->  "root_cam X Y Z focal FX FY default_focal D" (all digits) */
#include <stdio.h>
#include <stdlib.h>

#include <rootnet.h>

int main(int argc, char **argv)
{
    rootnet_box b;
    if (argc != 4 || sscanf(argv[3], "%lf,%lf,%lf,%lf", &b.x, &b.y, &b.w, &b.h) != 4) {
        fprintf(stderr, "usage: capi_file SNAPSHOT IMAGE x,y,w,h\n");
        return 2;
    }
    rootnet_options o;
    rootnet_options_init(&o);
    o.threads = 1;
    o.input_size = 64;
    char msg[512];
    rootnet_predictor *p;
    if (rootnet_create(&p, argv[1], &o, msg, sizeof msg)) {
        fprintf(stderr, "capi_file: %s\n", msg);
        return 1;
    }
    rootnet_root r;
    rootnet_info info;
    rootnet_status st = rootnet_predict_file(p, argv[2], &b, 1, NULL, &r, &info);
    if (st) fprintf(stderr, "capi_file: %s\n", rootnet_last_error(p));
    else printf("root_cam %.17g %.17g %.17g focal %.17g %.17g default_focal %d\n", r.cam[0], r.cam[1], r.cam[2],
                info.focal[0], info.focal[1], info.default_focal);
    rootnet_destroy(p);
    return st ? 1 : 0;
}
