"""Published key material never carries the secret randomness."""

import ember
from ember import ckks, ring

KEY = bytes(range(100, 132))


def _ctx():
    ctx = ckks.Context(ckks.Params(log_n=10, levels=2, insecure=True), device="cpu")
    ctx._sampler = ring.Sampler(KEY)  # the master key that also draws the secret
    return ctx


def test_public_seeds_are_derived_not_the_sampler_key():
    ctx = _ctx()
    sk = ctx.keygen()
    pk = ctx.public_key(sk)
    ek = ctx.eval_keys(sk, rotations=[1])
    seeds = [pk._raw.seed, ek.relin.seed] + [k.seed for k in ek.galois.values()]
    assert all(s != KEY for s in seeds)
    assert len(set(seeds)) == len(seeds)  # a fresh derived key per published key
    for blob in (pk.to_bytes(), ek.to_bytes()):
        assert KEY not in blob


def test_secret_key_bytes_only_on_request():
    ctx = _ctx()
    sk = ctx.keygen()
    pk = ctx.public_key(sk)
    ct = ctx.encrypt([1.0, 2.0], pk)
    s_bytes = sk.to_bytes()
    # Nothing public embeds the secret polynomial's words.
    words = s_bytes[36 : 36 + 64]
    for blob in (pk.to_bytes(), ct.to_bytes()):
        assert words not in blob
    assert isinstance(ctx.secret_key_from_bytes(s_bytes), ckks.SecretKey)
    assert issubclass(ember.SerializationError, ValueError)
