/// The fuzz targets; the raw value is the name used on the command line and in `Fuzz/corpus/<name>`.
enum FuzzTarget: String, CaseIterable {
    case httpParser = "http-parser"
    case json
    case cbor
    case attestation
    case assertion
    case nip98
    case grant
    case der
    case androidAttestation = "android-attestation"
    case websocket
    case nostrRelay = "nostr-relay"
    case marmotContent = "marmot-content"

    static var allNames: String { allCases.map(\.rawValue).joined(separator: "|") }

    /// Builds the fixed inputs (keys, verifiers) once, outside the timed runs.
    func prepare() {
        switch self {
        case .httpParser, .json, .cbor, .der: break
        case .attestation: AttestationTarget.prepare()
        case .assertion: AssertionTarget.prepare()
        case .nip98: NIP98Target.prepare()
        case .grant: GrantTarget.prepare()
        case .androidAttestation: AndroidAttestationTarget.prepare()
        case .websocket: WebSocketTarget.prepare()
        case .nostrRelay: NostrRelayTarget.prepare()
        case .marmotContent: MarmotContentTarget.prepare()
        }
    }

    /// Runs one input; an invariant that does not hold aborts, which libFuzzer reports as a crash.
    func run(_ input: UnsafeRawBufferPointer) {
        switch self {
        case .httpParser: HTTPParserTarget.run(input)
        case .json: JSONTarget.run(Array(input))
        case .cbor: CBORTarget.run(Array(input))
        case .attestation: AttestationTarget.run(Array(input))
        case .assertion: AssertionTarget.run(Array(input))
        case .nip98: NIP98Target.run(Array(input))
        case .grant: GrantTarget.run(Array(input))
        case .der: DERTarget.run(Array(input))
        case .androidAttestation: AndroidAttestationTarget.run(Array(input))
        case .websocket: WebSocketTarget.run(Array(input))
        case .nostrRelay: NostrRelayTarget.run(Array(input))
        case .marmotContent: MarmotContentTarget.run(Array(input))
        }
    }
}
