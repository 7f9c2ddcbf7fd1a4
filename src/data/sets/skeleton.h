/* rn_skeleton: a joint set as the authors' PoseNet datasets define it (3DMPPE_POSENET_RELEASE,
 * data/<set>/<set>.py): joint names in their order, the pairs a horizontal flip swaps, the bones
 * drawn, the root. PoseNet outputs one row per joint of the first 3D training set's skeleton; the
 * other sets' joints are mapped onto it by name (rn_skeleton_map, their transform_joint_to_other_db).
 *
 *   const rn_skeleton *s = rn_skeleton_find("Human36M");     // 18 joints, Thorax added
 *   int map[RN_SKELETON_MAX];
 *   rn_skeleton_map(map, rn_skeleton_find("MSCOCO"), s);      // map[j]: COCO's joint for s's j, or -1
 */
#ifndef RN_DATA_SETS_SKELETON_H
#define RN_DATA_SETS_SKELETON_H

#include <stddef.h>

#define RN_SKELETON_MAX 32

typedef struct rn_skeleton {
    const char *name;              /* the set's name as rootnet's readers spell it ("Human36M") */
    int J;                         /* joints */
    const char *const *joints;     /* J names, the authors' spelling ("Pelvis", "R_Hip", ...) */
    const int (*flip)[2];          /* pairs swapped by a horizontal flip */
    int nflip;
    const int (*bones)[2];         /* pairs joined when drawn */
    int nbones;
    int root;                      /* the root joint's index (Pelvis) */
    const int *eval;               /* joints evaluated (the authors' eval_joint), neval of them */
    int neval;
    int have_depth;                /* 1: the set's joints have depth (3D sets) */
} rn_skeleton;

/* The joint set named name (case-sensitive: "Human36M", "MuCo", "MuPoTS", "MSCOCO", "MPII"), or NULL. */
const rn_skeleton *rn_skeleton_find(const char *name);
/* The 3D joint set with J joints (18: Human36M, 21: MuCo), the one a PoseNet with J outputs was
 * trained for; NULL when none or more than one has J. */
const rn_skeleton *rn_skeleton_for_joints(int J);
/* map[j] (to->J entries) = the index in from of to's joint j by name, -1 where from has none. */
void rn_skeleton_map(int *map, const rn_skeleton *from, const rn_skeleton *to);
/* Index of the joint named name in s, -1 if none. */
int rn_skeleton_joint(const rn_skeleton *s, const char *name);
/* Every set's name joined by ", " into buf (n bytes), for error lines; returns buf. */
const char *rn_skeleton_names(char *buf, size_t n);

#endif
