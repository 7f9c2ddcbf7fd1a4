/* The joint sets of the authors' PoseNet datasets (data/sets/skeleton.h), as their data/<set>/<set>.py. */
#include "data/sets/skeleton.h"

#include <stdio.h>
#include <string.h>

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Human3.6M: 17 joints and the Thorax the authors add (the shoulders' mean). */
static const char *const H36M_J[] = {"Pelvis", "R_Hip", "R_Knee", "R_Ankle", "L_Hip", "L_Knee",
                                     "L_Ankle", "Torso", "Neck", "Nose", "Head", "L_Shoulder",
                                     "L_Elbow", "L_Wrist", "R_Shoulder", "R_Elbow", "R_Wrist", "Thorax"};
static const int H36M_FLIP[][2] = {{1, 4}, {2, 5}, {3, 6}, {14, 11}, {15, 12}, {16, 13}};
static const int H36M_BONES[][2] = {{0, 7},  {7, 8},   {8, 9},   {9, 10}, {8, 11}, {11, 12},
                                    {12, 13}, {8, 14}, {14, 15}, {15, 16}, {0, 1},  {1, 2},
                                    {2, 3},   {0, 4},  {4, 5},   {5, 6}};
static const int H36M_EVAL[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

/* MuCo-3DHP: 21 joints; MuPoTS-3D: its first 17. */
static const char *const MUCO_J[] = {"Head_top", "Thorax", "R_Shoulder", "R_Elbow", "R_Wrist", "L_Shoulder",
                                     "L_Elbow", "L_Wrist", "R_Hip", "R_Knee", "R_Ankle", "L_Hip",
                                     "L_Knee", "L_Ankle", "Pelvis", "Spine", "Head", "R_Hand",
                                     "L_Hand", "R_Toe", "L_Toe"};
static const int MUCO_FLIP[][2] = {{2, 5}, {3, 6}, {4, 7}, {8, 11}, {9, 12}, {10, 13}, {17, 18}, {19, 20}};
static const int MUCO_BONES[][2] = {{0, 16}, {16, 1}, {1, 15}, {15, 14}, {14, 8}, {14, 11}, {8, 9},
                                    {9, 10}, {10, 19}, {11, 12}, {12, 13}, {13, 20}, {1, 2},  {2, 3},
                                    {3, 4},  {4, 17}, {1, 5},   {5, 6},   {6, 7},   {7, 18}};
static const int MUPOTS_FLIP[][2] = {{2, 5}, {3, 6}, {4, 7}, {8, 11}, {9, 12}, {10, 13}};
static const int MUPOTS_BONES[][2] = {{0, 16}, {16, 1}, {1, 15}, {15, 14}, {14, 8}, {14, 11}, {8, 9}, {9, 10},
                                      {11, 12}, {12, 13}, {1, 2},  {2, 3},   {3, 4},   {1, 5},   {5, 6}, {6, 7}};
static const int MUPOTS_EVAL[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

/* MS COCO: 17 keypoints and the Thorax and Pelvis the authors add. */
static const char *const COCO_J[] = {"Nose", "L_Eye", "R_Eye", "L_Ear", "R_Ear", "L_Shoulder", "R_Shoulder",
                                     "L_Elbow", "R_Elbow", "L_Wrist", "R_Wrist", "L_Hip", "R_Hip",
                                     "L_Knee", "R_Knee", "L_Ankle", "R_Ankle", "Thorax", "Pelvis"};
static const int COCO_FLIP[][2] = {{1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 10}, {11, 12}, {13, 14}, {15, 16}};
static const int COCO_BONES[][2] = {{1, 2},   {0, 1},   {0, 2},   {2, 4},   {1, 3},  {6, 8},  {8, 10}, {5, 7},
                                    {7, 9},   {12, 14}, {14, 16}, {11, 13}, {13, 15}, {5, 6}, {11, 12}};

/* MPII: 16 joints. */
static const char *const MPII_J[] = {"R_Ankle", "R_Knee", "R_Hip", "L_Hip", "L_Knee", "L_Ankle",
                                     "Pelvis", "Thorax", "Neck", "Head", "R_Wrist", "R_Elbow",
                                     "R_Shoulder", "L_Shoulder", "L_Elbow", "L_Wrist"};
static const int MPII_FLIP[][2] = {{0, 5}, {1, 4}, {2, 3}, {10, 15}, {11, 14}, {12, 13}};
static const int MPII_BONES[][2] = {{0, 1},  {1, 2},   {2, 6},   {7, 12}, {12, 11}, {11, 10}, {5, 4}, {4, 3},
                                    {3, 6},  {7, 13},  {13, 14}, {14, 15}, {6, 7},  {7, 8},   {8, 9}};

#define SET(nm, j, fl, bo, root, ev, nev, depth) \
    {nm, LEN(j), j, fl, LEN(fl), bo, LEN(bo), root, ev, nev, depth}

static const rn_skeleton SETS[] = {
    SET("Human36M", H36M_J, H36M_FLIP, H36M_BONES, 0, H36M_EVAL, LEN(H36M_EVAL), 1),
    SET("MuCo", MUCO_J, MUCO_FLIP, MUCO_BONES, 14, NULL, 0, 1),
    {"MuPoTS", 17, MUCO_J, MUPOTS_FLIP, LEN(MUPOTS_FLIP), MUPOTS_BONES, LEN(MUPOTS_BONES), 14, MUPOTS_EVAL,
     LEN(MUPOTS_EVAL), 1},
    SET("MSCOCO", COCO_J, COCO_FLIP, COCO_BONES, 18, NULL, 0, 0),
    SET("MPII", MPII_J, MPII_FLIP, MPII_BONES, 6, NULL, 0, 0),
};
enum { NSETS = LEN(SETS) };

const rn_skeleton *rn_skeleton_find(const char *name)
{
    for (int i = 0; i < NSETS; i++)
        if (name && !strcmp(SETS[i].name, name)) return &SETS[i];
    return NULL;
}

const rn_skeleton *rn_skeleton_for_joints(int J)
{
    const rn_skeleton *found = NULL;
    for (int i = 0; i < NSETS; i++) {
        if (SETS[i].J != J || !SETS[i].have_depth) continue;
        if (found) return NULL;
        found = &SETS[i];
    }
    return found;
}

int rn_skeleton_joint(const rn_skeleton *s, const char *name)
{
    for (int j = 0; j < s->J; j++)
        if (!strcmp(s->joints[j], name)) return j;
    return -1;
}

void rn_skeleton_map(int *map, const rn_skeleton *from, const rn_skeleton *to)
{
    for (int j = 0; j < to->J; j++) map[j] = rn_skeleton_joint(from, to->joints[j]);
}

const char *rn_skeleton_names(char *buf, size_t n)
{
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < NSETS && at < n; i++) {
        int w = snprintf(buf + at, n - at, "%s%s", i ? ", " : "", SETS[i].name);
        at += w > 0 ? (size_t)w : 0;
    }
    return buf;
}
