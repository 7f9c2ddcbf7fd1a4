/* PoseNet (Moon, Chang, Lee, ICCV 2019), as the authors' 3DMPPE_POSENET_RELEASE main/model.py
 * ResPoseNet: after the ResNet backbone, three deconvolutions to 256 channels (head.deconv_layers),
 * a 1x1 conv with bias (head.final_layer, 256 -> J x 64) and one soft-argmax per joint over its
 * whole 64 x H x W volume (one softmax over depth bins and positions). One output row per joint:
 * x, y on the output grid (input / 4) and z in depth bins (0 .. 64: the root-relative depth over
 * the 2000 mm bbox_3d_shape). J is the first 3D training set's joints: Human3.6M's 18 (Thorax
 * added) or MuCo-3DHP's 21; a weight file tells which by its final layer's J x 64 outputs.
 * Initialisation as the authors': deconvs and the final conv N(0, 0.001), biases 0.
 */
#include "nn/net.h"

enum { DEPTH_BINS = 64 };

#define POSENET(id, J, joints)                                                                         \
    static const rn_head_layer HEAD_##id[] = {                                                         \
        {.kind = RN_HEAD_HEATMAP, .param = "head.final_layer", .groups = J, .bins = DEPTH_BINS, .col = 0}, \
    };                                                                                                 \
    static const rn_net NET_##id = {                                                                   \
        .name = "posenet",                                                                             \
        .title = "PoseNet",                                                                            \
        .doc = "each joint: x, y on the output grid (input / 4), z in depth bins (64 over 2000 mm, "   \
               "root-relative)",                                                                       \
        .deconv = "head.deconv_layers",                                                                \
        .ndeconv = 3,                                                                                  \
        .deconv_ch = 256,                                                                              \
        .head = HEAD_##id,                                                                             \
        .nhead = 1,                                                                                    \
        .K = J,                                                                                        \
        .skeleton = joints,                                                                            \
        .init_std = 0.001,                                                                             \
    };

POSENET(H36M, 18, "Human36M")
POSENET(MUCO, 21, "MuCo")

const rn_net *rn_net_posenet(int i)
{
    static const rn_net *const NETS[] = {&NET_H36M, &NET_MUCO};
    return i >= 0 && i < (int)(sizeof NETS / sizeof NETS[0]) ? NETS[i] : NULL;
}
