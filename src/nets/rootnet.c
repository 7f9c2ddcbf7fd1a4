/* RootNet (Moon, Chang, Lee, ICCV 2019), as the authors' main/model.py RootNet: after the ResNet
 * backbone, three deconvolutions to 256 channels (root.deconv_layers); the xy head, a 1x1 conv
 * (root.xy_layer, 256 -> 1) and a soft-argmax over the whole output grid, gives the root's column
 * and row; the depth head, the backbone output's global average pool and a 1x1 conv
 * (root.depth_layer, C -> 1), gives gamma, and depth = gamma * k with k = sqrt(2000^2 fx fy / area)
 * the forward's per-sample input. One output row per sample: (x, y) on the output grid (input / 4)
 * and the absolute depth in mm. Initialisation as the authors': deconvs and both heads N(0, 0.001).
 */
#include "nn/net.h"

static const rn_head_layer HEAD[] = {
    {.kind = RN_HEAD_HEATMAP, .param = "root.xy_layer", .groups = 1, .bins = 1, .col = 0},
    {.kind = RN_HEAD_GAP_LINEAR, .param = "root.depth_layer", .groups = 1, .scale_k = 1, .col = 2},
};

static const char *const ROWS[] = {"Pelvis"};

static const rn_net ROOTNET = {
    .name = "rootnet",
    .title = "RootNet",
    .doc = "the root (pelvis): x, y on the output grid (input / 4), depth in mm (gamma * k)",
    .deconv = "root.deconv_layers",
    .ndeconv = 3,
    .deconv_ch = 256,
    .head = HEAD,
    .nhead = (int)(sizeof HEAD / sizeof HEAD[0]),
    .K = 1,
    .row_names = ROWS,
    .init_std = 0.001,
};

const rn_net *rn_net_rootnet(void) { return &ROOTNET; }
