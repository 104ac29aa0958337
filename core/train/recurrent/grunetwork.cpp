#include "core/train/recurrent/grunetwork.h"

#include <cassert>
#include <cmath>

#include "core/compute/logsumexp.h"
#include "core/model/randommodel.h"

namespace attnscope::train {

Status GruConfig::validate() const
{
    if (hidden < 1 || hidden > 4096) return Status::failure("the hidden width is " + std::to_string(hidden) + "; it must be between 1 and 4,096.");
    if (vocab < 2 || vocab > (1 << 20)) return Status::failure("the vocabulary size is " + std::to_string(vocab) + "; it must be between 2 and 1,048,576.");
    if (context < 2 || context > (1 << 20)) return Status::failure("the context is " + std::to_string(context) + "; it must be between 2 and 1,048,576.");
    return {};
}

GruLayout makeGruLayout(const GruConfig& c)
{
    GruLayout layout;
    auto add = [&layout](std::string name, Eigen::Index rows, Eigen::Index cols, bool decay) {
        layout.tensors.push_back({std::move(name), layout.total, rows, cols, decay});
        layout.total += rows * cols;
        return static_cast<int>(layout.tensors.size() - 1);
    };
    const Eigen::Index Hd = c.hidden;
    layout.embedding = add("embedding.weight", c.vocab, Hd, true);
    layout.inputWeights = add("gru.weight_ih", Hd, 3 * Hd, true);
    layout.hiddenWeights = add("gru.weight_hh", Hd, 3 * Hd, true);
    layout.inputBias = add("gru.bias_ih", 1, 3 * Hd, false);
    layout.hiddenBias = add("gru.bias_hh", 1, 3 * Hd, false);
    layout.outputWeights = add("output.weight", Hd, Hd, true);
    layout.outputProjectionBias = add("output.projection_bias", 1, Hd, false);
    layout.outputBias = add("output.bias", 1, c.vocab, false);
    return layout;
}

template <class S>
Vec<S> initialGruParameters(const GruConfig& c, const GruLayout& layout, unsigned long long seed)
{
    SeededRandom random(seed);
    Vec<S> p = Vec<S>::Zero(layout.total);
    const TensorSlot& e = layout.tensors[static_cast<std::size_t>(layout.embedding)];
    const double sd = 1.0 / std::sqrt(double(c.hidden));
    for (Eigen::Index i = 0; i < e.size(); ++i) p[e.offset + i] = static_cast<S>(sd * random.normal());
    for (int k : {layout.inputWeights, layout.hiddenWeights, layout.outputWeights}) {
        const TensorSlot& t = layout.tensors[static_cast<std::size_t>(k)];
        for (Eigen::Index i = 0; i < t.size(); ++i) p[t.offset + i] = static_cast<S>(sd * (2.0 * random.uniform() - 1.0));
    }
    return p;
}

template <class S>
GruNetwork<S>::GruNetwork(GruConfig config) : m_config(config), m_layout(makeGruLayout(config))
{
    assert(config.validate().ok());
}

template <class S>
void GruNetwork<S>::resize(int B, int T)
{
    if (B == m_B && T == m_T) return;
    m_B = B;
    m_T = T;
    const Eigen::Index N = Eigen::Index(B) * T, Hd = m_config.hidden, V = m_config.vocab;
    m_inputs.resize(static_cast<std::size_t>(N));
    m_targets.resize(static_cast<std::size_t>(N));
    for (Mat<S>* m : {&m_x, &m_ghn, &m_r, &m_z, &m_n, &m_y, &m_dy, &m_dh, &m_dx}) m->resize(N, Hd);
    m_gi.resize(N, 3 * Hd);
    m_dgi.resize(N, 3 * Hd);
    m_h.resize(N + B, Hd);
    m_probsT.resize(V, N);
    m_gh.resize(B, 3 * Hd);
    m_dCarry.resize(B, Hd);
}

template <class S>
S GruNetwork<S>::run(const Vec<S>& params, const int* tokens, int B, int T, S lossWeight, Vec<S>* gradient)
{
    resize(B, T);
    const GruLayout& lay = m_layout;
    const Eigen::Index N = Eigen::Index(B) * T, Hd = m_config.hidden;
    auto M = [&](int i) { return matrixOf(params, lay.tensors[static_cast<std::size_t>(i)]); };
    auto R = [&](int i) { return rowOf(params, lay.tensors[static_cast<std::size_t>(i)]); };
    const Eigen::Map<const Mat<S>> E = M(lay.embedding), W = M(lay.inputWeights), U = M(lay.hiddenWeights);  // (V, Hd) (Hd, G) (Hd, G)

    // 1. Time-major inputs and targets: row t B + b is sequence b's token t.
    for (int b = 0; b < B; ++b)
        for (int t = 0; t < T; ++t) {
            m_inputs[static_cast<std::size_t>(t * B + b)] = tokens[b * (T + 1) + t];
            m_targets[static_cast<std::size_t>(t * B + b)] = tokens[b * (T + 1) + t + 1];
        }

    // 2. The input half of every gate at every step in one product; only the hidden half is sequential.
    for (Eigen::Index n = 0; n < N; ++n) m_x.row(n) = E.row(m_inputs[static_cast<std::size_t>(n)]);
    linearForward<S>(m_x, W, R(lay.inputBias), m_gi);  // (N, G)

    // 3. The recurrence. m_h's first B rows are the zero state every sequence starts from.
    m_h.topRows(B).setZero();
    for (int t = 0; t < T; ++t) {
        const Eigen::Index at = Eigen::Index(t) * B;
        linearForward<S>(m_h.middleRows(at, B), U, R(lay.hiddenBias), m_gh);  // (B, G)
        m_r.middleRows(at, B) = (S(1) + (-(m_gi.block(at, 0, B, Hd) + m_gh.leftCols(Hd)).array()).exp()).inverse().matrix();
        m_z.middleRows(at, B) = (S(1) + (-(m_gi.block(at, Hd, B, Hd) + m_gh.middleCols(Hd, Hd)).array()).exp()).inverse().matrix();
        m_ghn.middleRows(at, B) = m_gh.rightCols(Hd);
        m_n.middleRows(at, B) = (m_gi.block(at, 2 * Hd, B, Hd).array() + m_r.middleRows(at, B).array() * m_gh.rightCols(Hd).array()).tanh().matrix();
        m_h.middleRows(at + B, B) = ((S(1) - m_z.middleRows(at, B).array()) * m_n.middleRows(at, B).array() +
                                     m_z.middleRows(at, B).array() * m_h.middleRows(at, B).array()).matrix();
    }

    // 4. The projection, the tied unembedding plus the output bias, then cross-entropy against the next ids.
    const auto states = m_h.bottomRows(N);  // (N, Hd)
    linearForward<S>(states, M(lay.outputWeights), R(lay.outputProjectionBias), m_y);
    m_probsT.noalias() = E * m_y.transpose();  // (V, N)
    m_probsT.colwise() += R(lay.outputBias).transpose();
    S loss = 0;
    for (Eigen::Index n = 0; n < N; ++n) {
        const S target = m_probsT(m_targets[static_cast<std::size_t>(n)], n);
        loss += softmaxInPlace(m_probsT.col(n)) - target;
    }
    if (!gradient) return loss;

    // 5. Backward through the output: d = (p - onehot) w; dE += d y, db_out += row sums, dy = d^T E, then
    //    through the projection to the states.
    Vec<S>& g = *gradient;
    auto dM = [&](int i) { return matrixOf(g, lay.tensors[static_cast<std::size_t>(i)]); };
    auto dR = [&](int i) { return rowOf(g, lay.tensors[static_cast<std::size_t>(i)]); };
    Eigen::Map<Mat<S>> dE = dM(lay.embedding), dU = dM(lay.hiddenWeights);
    for (Eigen::Index n = 0; n < N; ++n) m_probsT(m_targets[static_cast<std::size_t>(n)], n) -= S(1);
    m_probsT *= lossWeight;
    dE.noalias() += m_probsT * m_y;  // (V, Hd)
    dR(lay.outputBias) += m_probsT.rowwise().sum().transpose();
    m_dy.noalias() = m_probsT.transpose() * E;  // (N, Hd)
    linearBackward<S>(states, M(lay.outputWeights), m_dy, dM(lay.outputWeights), dR(lay.outputProjectionBias), m_dh);

    // 6. Through time, last step first. m_dCarry holds the gradient reaching h_t from step t + 1; added to the
    //    output's, it is the state's whole gradient. m_dx serves as the step's scratch (B rows).
    m_dCarry.setZero();
    for (int t = T - 1; t >= 0; --t) {
        const Eigen::Index at = Eigen::Index(t) * B;
        auto dh = m_dx.topRows(B);  // (B, Hd)
        dh = m_dh.middleRows(at, B) + m_dCarry;
        const auto r = m_r.middleRows(at, B).array(), z = m_z.middleRows(at, B).array(), n = m_n.middleRows(at, B).array();
        const auto hPrev = m_h.middleRows(at, B);
        // h' = (1 - z) n + z h: the candidate, the update gate and the old state each get their share.
        auto dan = m_dgi.block(at, 2 * Hd, B, Hd);  // through tanh: (1 - n^2)
        dan = (dh.array() * (S(1) - z) * (S(1) - n.square())).matrix();
        // The reset gate scaled h U_n + b_hn inside the tanh; both gates through the sigmoid: s (1 - s).
        m_dgi.block(at, 0, B, Hd) = (dan.array() * m_ghn.middleRows(at, B).array() * r * (S(1) - r)).matrix();
        m_dgi.block(at, Hd, B, Hd) = (dh.array() * (hPrev.array() - n) * z * (S(1) - z)).matrix();
        // The hidden half of the gates: r and z as the input half, the candidate's through r.
        m_gh.leftCols(2 * Hd) = m_dgi.block(at, 0, B, 2 * Hd);
        m_gh.rightCols(Hd) = (dan.array() * r).matrix();
        dU.noalias() += hPrev.transpose() * m_gh;  // (Hd, G)
        dR(lay.hiddenBias) += m_gh.colwise().sum();
        m_dCarry = (dh.array() * z).matrix();
        m_dCarry.noalias() += m_gh * U.transpose();  // (B, Hd)
    }

    // 7. The input half of the gates, then the embedding rows read.
    linearBackward<S>(m_x, W, m_dgi, dM(lay.inputWeights), dR(lay.inputBias), m_dx);
    for (Eigen::Index n = 0; n < N; ++n) dE.row(m_inputs[static_cast<std::size_t>(n)]) += m_dx.row(n);
    return loss;
}

template Vec<float> initialGruParameters<float>(const GruConfig&, const GruLayout&, unsigned long long);
template Vec<double> initialGruParameters<double>(const GruConfig&, const GruLayout&, unsigned long long);
template class GruNetwork<float>;
template class GruNetwork<double>;

} // namespace attnscope::train
