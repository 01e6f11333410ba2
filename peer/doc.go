// Package peer implements coopcc's cooperation protocol: terminals that share
// one WLAN access point broadcast an authenticated status message every
// interval (0.3 s by default, as in the papers) and each terminal keeps a
// bounded table of the peers it hears, from which it counts the active
// terminals N.
//
// The pieces, bottom up:
//   - the wire format (Status, Codec.Encode, Codec.Decode), specified in
//     docs/protocol.md and pinned by testdata/vectors.json;
//   - keys (Key, LoadKeyFile, DeriveKey) and group identifiers (GroupID);
//   - Reason, the typed outcome of receiving one datagram;
//   - Table: replay protection, per-sender rate limit, expiry, bounded size,
//     join/leave events and counters by reason;
//   - transports (IPv4 broadcast on an interface, IPv6 link-local multicast);
//   - Node, which runs the send and receive loops.
//
// Nothing a peer sends reaches a caller unvalidated: Decode rejects every
// field outside its documented range.
package peer
