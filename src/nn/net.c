/* The registry of networks (nn/net.h): the one place that names each net's description. */
#include "nn/net.h"

#include <stdio.h>
#include <string.h>

/* Every description in registry order: RootNet, then PoseNet on each skeleton. NULL past the last. */
static const rn_net *net_at(int i)
{
    return i == 0 ? rn_net_rootnet() : rn_net_posenet(i - 1);
}

const rn_net *rn_net_default(void) { return rn_net_rootnet(); }

const char *rn_net_names(char *buf, size_t n, int titles)
{
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; net_at(i) && at < n; i++) {
        const char *name = titles ? net_at(i)->title : net_at(i)->name;
        if (strstr(buf, name)) continue;
        int w = snprintf(buf + at, n - at, "%s%s", at ? " or " : "", name);
        at += w > 0 ? (size_t)w : 0;
    }
    return buf;
}

const rn_head_layer *rn_net_layer(const rn_net *net, rn_head_kind kind)
{
    for (int i = 0; i < net->nhead; i++)
        if (net->head[i].kind == kind) return &net->head[i];
    return NULL;
}

int rn_net_uses_k(const rn_net *net)
{
    for (int i = 0; i < net->nhead; i++)
        if (net->head[i].scale_k) return 1;
    return 0;
}

const rn_net *rn_net_find(const char *name, const char *joints)
{
    for (int i = 0; net_at(i); i++) {
        const rn_net *net = net_at(i);
        if (strcmp(net->name, name)) continue;
        if (!joints || (net->skeleton && !strcmp(net->skeleton, joints))) return net;
    }
    return NULL;
}

/* The first dimension of a head layer's weight: heat maps x bins, or the linear layer's outputs. */
static long layer_rows(const rn_head_layer *l)
{
    return l->kind == RN_HEAD_HEATMAP ? (long)l->groups * l->bins : l->groups;
}

const rn_net *rn_net_guess(long (*rows)(const char *name, void *ctx), void *ctx)
{
    for (int i = 0; net_at(i); i++) {
        const rn_net *net = net_at(i);
        int all = 1;
        for (int l = 0; l < net->nhead && all; l++) {
            char name[128];
            snprintf(name, sizeof name, "%s.weight", net->head[l].param);
            all = rows(name, ctx) == layer_rows(&net->head[l]);
        }
        if (all) return net;
    }
    return NULL;
}
