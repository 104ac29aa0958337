#pragma once
// The Words switch: a pass seen at word level. The snapshot it makes is one the views of query × key
// weights (heatmap, grid, lines, the exports) read exactly as they read a token snapshot, with
//   - `tokens`: the words of the text (core/text/words.h), each id the first of its tokens' ids, special
//     where its tokens are (<bos>, [CLS]);
//   - every head's weights merged by Clark et al.'s rule (core/analysis/wordattention.h), (W, W);
//   - the focused head's detail holding only `masked` (W, W): −inf where every token pair of the two words
//     is hidden (the causal mask, a blocked key), 0 elsewhere, so a masked word pair is drawn as masked;
//     and its `weights`, the focused head's word weights again (for views that read the detail's).
// What does not merge stays per token and is left out: value-weighted attention (the display is weights),
// raw and scaled scores, the head's pipeline, the long-input overviews (views make them from the words).
#include "ui/document/document.h"

namespace attnscope {

// `snapshot` holds its words (Snapshot::words) and a trace; heads whose weights it did not keep stay empty.
SnapshotPtr wordSnapshot(const Snapshot& snapshot);

// The rule, for a tooltip or a caption: one sentence.
QString wordRuleText();

} // namespace attnscope
