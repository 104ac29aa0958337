// attnscope-cli circuits: what each head computes, read from its weights alone (core/research/circuits.h):
// the QK and OV circuits' singular values, the OV circuit's copying score and the composition between heads.
#include <algorithm>

#include "common.h"
#include "core/dataexport/jsonexport.h"
#include "core/model/encoderdecoder.h"
#include "core/research/circuits.h"

namespace attnscope::cli::circuitsCommand {
namespace {

void declare(Options& o)
{
    o.model();
    o.value("--layer", "L", "keep the heads of this layer, and the composition into them (numbered from 0; all by default)");
    o.value("--head", "H", "keep this head of each kept layer, and the composition into it (all by default)");
    o.value("--positions", "N", "with --layer and --head: add that head's positional QK picture, P W_QK P^T over the first N "
                                "positions (models with a table of absolute positions)");
}

nlohmann::ordered_json numbers(const std::vector<double>& values)
{
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const double v : values) out.push_back(v);
    return out;
}

int run(const Args& args)
{
    ModelPtr model = openModel(args);
    const bool stacks = model->isEncoderDecoder();
    const int layers = std::max(model->config.layers, stacks ? model->decoder->layers : 0);
    CircuitFilter filter;
    if (args.has("--layer")) filter.layer = readInt(args, "--layer", 0, 0, layers - 1, "layer");
    if (args.has("--head")) filter.head = readInt(args, "--head", 0, 0, model->config.heads - 1, "head");
    const Circuits c = orFail(readCircuits(*model, filter), kExitInput);

    nlohmann::ordered_json heads = nlohmann::ordered_json::array();
    for (const CircuitHead& h : c.heads) {
        nlohmann::ordered_json row;
        if (stacks) row["stack"] = toString(h.stack);
        row["layer"] = h.layer;
        row["head"] = h.head;
        row["kv_head"] = h.kvHead;
        row["qk_singular_values"] = numbers(h.qkSingularValues);
        row["ov_singular_values"] = numbers(h.ovSingularValues);
        row["ov_copying_score"] = h.ovCopyingScore ? nlohmann::ordered_json(*h.ovCopyingScore) : nlohmann::ordered_json(nullptr);
        heads.push_back(std::move(row));
    }
    nlohmann::ordered_json composition = nlohmann::ordered_json::array();
    for (const CircuitComposition& x : c.composition) {
        nlohmann::ordered_json row;
        if (stacks) row["stack"] = toString(x.stack);
        row["from"] = {x.from.layer, x.from.head};
        row["to"] = {x.to.layer, x.to.head};
        row["q"] = x.q;
        row["k"] = x.k;
        row["v"] = x.v;
        composition.push_back(std::move(row));
    }
    nlohmann::ordered_json positional;
    if (args.has("--positions")) {
        if (!filter.layer || !filter.head) throw Failure{kExitUsage, "--positions needs --layer and --head: it pictures one head."};
        const int n = readInt(args, "--positions", 2, 2, 1 << 20, "positions");
        positional = json::matrix(orFail(positionalQkCircuit(*model, *filter.layer, *filter.head, n), kExitInput));
    }
    nlohmann::ordered_json notes = nlohmann::ordered_json::array();
    if (c.unrotatedQueryKey) notes.push_back("rotary positions: the QK circuit is the one at relative offset 0, without rotation.");
    if (c.scaleInQuery) notes.push_back("T5 keeps the 1/sqrt(d_head) scale inside W_Q, so its QK numbers include it.");
    if (c.approximateComposition)
        notes.push_back("post-norm model: each head's input norm is folded in, but not the norms between the heads, so composition is approximate.");
    if (!c.copyingNote.empty()) notes.push_back(c.copyingNote);
    nlohmann::ordered_json out = {{"model", model->config.name}, {"heads", std::move(heads)}, {"composition", std::move(composition)}};
    if (!positional.is_null()) out["positional_qk"] = std::move(positional);
    out["notes"] = std::move(notes);
    print(out);
    return 0;
}

const bool registered = registerCommand(
    {"circuits", "what each head computes for any input, from its weights: QK and OV circuits, copying score, composition", declare, run});

} // namespace
} // namespace attnscope::cli::circuitsCommand
