#pragma once
// Rotary position embedding (RoPE) in the rotate-half layout of Hugging Face's Llama and GPT-NeoX: within
// the first R dimensions of each head's Dh-wide slice (R = Dh for Llama, R = Dh * rotary_pct for NeoX),
// dimension i pairs with i + R/2 (P = R/2 pairs), and at position p the pair turns by the angle p * omega_i,
// with omega_i = theta^(-2i/R) rescaled as the config's rope scaling says; dimensions R..Dh-1 are left alone. A query at
// position m and a key at position n then meet at the angle (m - n) * omega_i: their score depends on
// positions only through the distance between them.
//
// Dimension letters: T tokens, Dh d_head, R rotary width (<= Dh), P = R/2 pairs, N heads in the matrix
// being rotated.
#include <Eigen/Core>

#include "core/model/modelconfig.h"
#include "core/model/weights.h"

namespace attnscope {

// omega_i for i = 0..P-1, in radians per position, after llama3 or linear scaling; `width` is R.   (P)
Eigen::VectorXd ropeInverseFrequencies(const RopeConfig& rope, int width);

// Inverse frequencies before any scaling, theta^(-2i/R), for showing what scaling changed.   (P)
Eigen::VectorXd ropeBaseFrequencies(double theta, int width);

// cos(p * omega_i) and sin(p * omega_i) for positions 0..T-1; resized only when the shape changes.
void ropeTables(const Eigen::VectorXd& omega, Eigen::Index tokens, Matrix& cos, Matrix& sin);  // (T, P) each

// Rotates the first R = 2 * cos.cols() columns of each of the N heads' Dh-wide column slices of x in place
// by its row's position, first + row (the tables' row).   x: (T, N*Dh)
void applyRotary(const Matrix& cos, const Matrix& sin, int dHead, Matrix& x, Eigen::Index first = 0);

// q . k for a query rotated to position m + distance and a key rotated to position m, for distances
// 0..maxDistance (it does not depend on m). q and k are one head's un-rotated vectors.   (maxDistance + 1)
Eigen::VectorXd rotaryScoreByDistance(const Eigen::VectorXd& omega, const Eigen::VectorXd& q,
                                      const Eigen::VectorXd& k, int maxDistance);

} // namespace attnscope
