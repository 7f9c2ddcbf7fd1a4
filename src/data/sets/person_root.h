/* rn_person_root: one person's root as inference gives it (infer/predict.h) and
 * the intrinsics used, the types the pictures draw (viz/people.h) without
 * reaching up into inference.
 *
 *   rn_person_root r;   // r.img: x, y (px), depth (mm); r.cam: X, Y, Z (mm)
 *   rn_predict_info info;  // info.default_focal: the authors' 1500 was assumed
 */
#ifndef RN_DATA_PERSON_ROOT_H
#define RN_DATA_PERSON_ROOT_H

typedef struct rn_person_root {
    double box[4];      /* the box as given (x, y, w, h) */
    double bbox[4];     /* after process_bbox */
    double k;           /* the k value used */
    double img[3];      /* root x, y (pixels), depth (mm) */
    double cam[3];      /* camera X, Y, Z (mm) */
} rn_person_root;

typedef struct rn_predict_info {
    int width, height;  /* image size */
    double f[2], c[2];  /* intrinsics used */
    int default_focal;  /* 1: the authors' focal 1500 was used */
    int default_c;      /* 1: the image centre was used */
    int orientation;    /* EXIF orientation applied (1..8; 1: none, or pixels given) */
} rn_predict_info;

/* Every person's joints from a PoseNet placed at their roots (infer/predict.h, predict_set.h), for the pictures:
 * person i's joint j at img[3 * (i * J + j)]: x, y (pixels), depth (mm), likewise cam: X, Y, Z (mm). */
typedef struct rn_people_pose {
    int J;                   /* joints per person */
    const char *const *names;/* (J) their names */
    const int (*bones)[2];   /* (nbones) joint pairs joined when drawn */
    int nbones;
    const double *img, *cam; /* (n, J, 3) */
} rn_people_pose;

#endif
