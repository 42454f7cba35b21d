import Glibc

// Built two ways (scripts/fuzz):
// - with `--sanitize=fuzzer -Xswiftc -DPUSH_LIBFUZZER`: libFuzzer owns `main` and calls the entry points
//   below; `PUSH_FUZZ_TARGET` names the target for the whole process.
// - in the normal `swift build`: a replayer, `push-fuzz <target> <file or directory>...`, that runs saved
//   inputs (a corpus, a crash reproducer) through the same target without libFuzzer, or, given
//   `--differential <kind>`, reports verdicts for scripts/differential (DifferentialMode.swift).

#if PUSH_LIBFUZZER
    /// The target of this process, read once from the environment.
    let selectedTarget: FuzzTarget = {
        let name = getenv("PUSH_FUZZ_TARGET").map { String(cString: $0) } ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            FuzzCheck.printError("set PUSH_FUZZ_TARGET to one of: \(FuzzTarget.allNames)")
            exit(2)
        }
        return target
    }()

    /// libFuzzer calls this once before fuzzing (libFuzzer's documented optional hook).
    @_cdecl("LLVMFuzzerInitialize")
    public func fuzzerInitialize(
        _ argc: UnsafeMutablePointer<Int32>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
    ) -> Int32 {
        selectedTarget.prepare()
        return 0
    }

    /// libFuzzer calls this for every generated input.
    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
        selectedTarget.run(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
        return 0
    }
#else
    @main
    enum Replay {
        static let usage = """
            usage: push-fuzz <\(FuzzTarget.allNames)> <file or directory>...
                   push-fuzz --differential <http|json|cbor>

            Replays saved inputs (a corpus, a crash reproducer) through one fuzz target without
            libFuzzer and checks its invariants on each; --differential reports the parsers' verdicts
            for scripts/differential. scripts/fuzz builds the libFuzzer-driven form.

            """

        static func main() {
            let arguments = CommandLine.arguments.dropFirst()
            if arguments.first == "--help" || arguments.first == "-h" {
                print(usage, terminator: "")
                return
            }
            if arguments.first == "--differential" {
                guard arguments.count == 2, let mode = DifferentialMode(rawValue: arguments.last ?? "") else {
                    FuzzCheck.printError(
                        "usage: push-fuzz --differential <\(DifferentialMode.allCases.map(\.rawValue).joined(separator: "|"))>"
                    )
                    exit(2)
                }
                mode.run()
                return
            }
            guard let name = arguments.first, let target = FuzzTarget(rawValue: name), arguments.count > 1 else {
                FuzzCheck.printError("usage: push-fuzz <\(FuzzTarget.allNames)> <file or directory>...")
                exit(2)
            }
            target.prepare()
            var count = 0
            for path in arguments.dropFirst() {
                for file in FuzzInputs.files(at: path) {
                    guard let bytes = FuzzInputs.read(file) else {
                        FuzzCheck.printError("cannot read \(file)")
                        exit(1)
                    }
                    bytes.withUnsafeBytes { target.run($0) }
                    count += 1
                }
            }
            print("\(name): \(count) inputs ran, every invariant held")
        }
    }
#endif
