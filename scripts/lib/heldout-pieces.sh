# Sourced by the perplexity scripts: the built-in model's held-out text, cut into pieces it never saw.
# heldout_pieces CLI PIECES DIR writes the built-in corpus's grammar from another seed (training used seed 1)
# into DIR, one word or mark a line, in pieces of 63 (64 tokens with <bos>, the length the model was trained
# on), each also as DIR/piece.NNNN.txt on one line; it sets the array `files` to the first PIECES pieces.
heldout_pieces() {
    local cli=$1 pieces=$2 dir=$3
    "$cli" corpus --out "$dir/corpus.txt" --documents $((pieces * 4)) --seed 7 > /dev/null
    tr -s ' \n' '\n\n' < "$dir/corpus.txt" | grep -v '^$' | split -l 63 -a 4 - "$dir/piece."
    mapfile -t files < <(ls "$dir"/piece.* | head -n "$pieces")
    [ "$(wc -l < "${files[-1]}")" -eq 63 ] || { echo "error: the corpus is too short for $pieces pieces." >&2; exit 1; }
    local f
    for f in "${files[@]}"; do tr '\n' ' ' < "$f" > "$f.txt"; done
}
