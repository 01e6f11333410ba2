#!/usr/bin/env python3
"""Independent check of vectors.json against docs/protocol.md (Python standard
library only): group ids, key derivation, length field, HMAC tag and the
header and TLV fields of every valid vector. Run: python3 verify_vectors.py"""
import hashlib, hmac, json, os, struct, sys

v = json.load(open(os.path.join(os.path.dirname(__file__), "vectors.json")))
key = bytes.fromhex(v["key_hex"])
for d in v["derive_key"]:
    k = hashlib.pbkdf2_hmac("sha256", d["passphrase"].encode(),
                            b"coopcc-peer-v1\x00" + d["group_name"].encode(), 4096, 32)
    assert k.hex() == d["key_hex"], d
for g in v["group_ids"]:
    assert hashlib.sha256(b"coopcc-group-v1\x00" + g["name"].encode()).digest()[:8].hex() == g["id_hex"], g
for m in v["valid"]:
    b = bytes.fromhex(m["message_hex"])
    f = m["fields"]
    assert b[:4] == b"CoCC" and b[4] == 1
    assert struct.unpack(">H", b[6:8])[0] == len(b)
    assert b[8:16].hex() == v["group_id_hex"]
    assert hmac.compare_digest(hmac.new(key, b[:-16], hashlib.sha256).digest()[:16], b[-16:])
    assert bool(b[5] & 1) == f["leaving"]
    sender, seq, t = struct.unpack(">QQq", b[16:40])
    assert "%x" % sender == f["sender_hex"] and str(seq) == f["seq"] and str(t) == f["sent_at_unix_ns"]
    p, tlv = b[40:-16], {}
    while p:
        tlv[p[0]] = p[2:2 + p[1]]
        p = p[2 + p[1]:]
    u32 = lambda t: struct.unpack(">I", tlv[t])[0]
    u64 = lambda t: struct.unpack(">Q", tlv[t])[0]
    srtt, minrtt = u32(3), u32(4)
    if srtt and minrtt > srtt:
        minrtt = srtt  # the receiver's one clamp
    got = dict(active_flows=u32(1), cwnd_segments=u32(2), srtt_us=srtt, min_rtt_us=minrtt,
               delivery_rate_Bps=str(u64(5)), demand_bytes=str(u64(6)), app_limited=tlv[7] == b"\x01",
               capability_Bps=str(u64(8)), bound_lo_segments=struct.unpack(">I", tlv[9][:4])[0],
               bound_hi_segments=struct.unpack(">I", tlv[9][4:])[0], policy=tlv.get(10, b"").decode())
    # Downloads (TLVs 11-14) are sent together or not at all; zero values
    # are left out of the JSON fields.
    down = dict(down_flows=0, down_rate_Bps="0", down_srtt_us=0, rcv_hi_segments=0)
    if 11 in tlv:
        got.update(down_flows=u32(11), down_rate_Bps=str(u64(12)), down_srtt_us=u32(13), rcv_hi_segments=u32(14))
    # The learned queue per contender (TLV 15), left out of the JSON when 0.
    down["queue_segments"] = 0
    if 15 in tlv:
        got.update(queue_segments=u32(15))
    # The link rate (TLV 16), kbit/s, left out of the JSON when 0.
    down["link_rate_kbps"] = 0
    if 16 in tlv:
        got.update(link_rate_kbps=u32(16))
    # The airtime of the sender's last interval (TLV 17): three u32 in µs,
    # channel, busy, own; each left out of the JSON when 0. Busy and own are
    # each at most the channel time (busy may be below own).
    down.update(air_channel_us=0, air_busy_us=0, air_own_us=0)
    if 17 in tlv:
        assert len(tlv[17]) == 12, (m["name"], "TLV 17 length", len(tlv[17]))
        ch, busy, own = struct.unpack(">III", tlv[17])
        assert ch <= 60_000_000 and busy <= ch and own <= ch, (m["name"], ch, busy, own)
        got.update(air_channel_us=ch, air_busy_us=busy, air_own_us=own)
    # The probe the sender announces (TLV 18): u32 epoch, u32 segments
    # (1..65535); left out of the JSON when none.
    down.update(plan_epoch=0, plan_segments=0)
    if 18 in tlv:
        assert len(tlv[18]) == 8, (m["name"], "TLV 18 length", len(tlv[18]))
        epoch, segs = struct.unpack(">II", tlv[18])
        assert 1 <= segs <= 65535, (m["name"], "TLV 18 segments", segs)
        got.update(plan_epoch=epoch, plan_segments=segs)
    # The evaluation into the plan's epoch from which it takes force (TLV
    # 19): u32, 1..255, only together with TLV 18; left out of the JSON
    # when 0 (the epoch's start: the TLV is omitted).
    down["plan_from"] = 0
    if 19 in tlv:
        assert 18 in tlv, (m["name"], "TLV 19 without TLV 18")
        assert len(tlv[19]) == 4, (m["name"], "TLV 19 length", len(tlv[19]))
        frm = u32(19)
        assert 1 <= frm <= 255, (m["name"], "TLV 19 from", frm)
        got.update(plan_from=frm)
    # How the sender's group shares its capacity (TLV 20): u32 flags, bit 0
    # (1) the group's learned split is per access, bit 1 (2) the windows of
    # the plan of TLV 18 share per access (a split probe, only together with
    # TLV 18); no other bit. Each left out of the JSON when false (equal
    # rates: the TLV is omitted when 0).
    down.update(access_shares=False, plan_access_shares=False)
    if 20 in tlv:
        assert len(tlv[20]) == 4, (m["name"], "TLV 20 length", len(tlv[20]))
        sh = u32(20)
        assert sh & ~3 == 0, (m["name"], "TLV 20 flags", sh)
        assert not sh & 2 or 18 in tlv, (m["name"], "TLV 20 bit 1 without TLV 18")
        got.update(access_shares=bool(sh & 1), plan_access_shares=bool(sh & 2))
    for k, zero in down.items():
        assert f.get(k, zero) == got.get(k, zero), (m["name"], k)
        got.pop(k, None)
    for name, val in got.items():
        assert f[name] == val, (m["name"], name, f[name], val)
    print("ok  ", m["name"])
sys.exit(0)
