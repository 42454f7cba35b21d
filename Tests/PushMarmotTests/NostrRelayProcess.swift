import Foundation
import PushSystem
import PushTestSupport

/// A real Nostr relay on loopback: `nostr-relay` from PyPI (Tests/requirements.txt), with its own
/// SQLite file and configuration in a scratch directory. It speaks NIP-01 and the NIP-42 draft it
/// was written against (an `AUTH` challenge on connect, a `NOTICE` for what a role may not do, and
/// no `OK` for the `AUTH` event; docs/decisions/0481-marmot-relay-tests.md).
final class NostrRelayProcess {
    let port: Int
    let scratch: ScratchDirectory
    let requiresAuthentication: Bool
    /// Keys given nostr-relay's reader role: with any, only they may subscribe (after NIP-42 AUTH).
    let authenticatedReaders: [String]
    /// `wss://` with the test CA's certificate for 127.0.0.1 (uvicorn's TLS).
    let certificates: APNsTestCertificates?
    private var process: Process?
    private let logPath: String

    var url: String { "\(certificates == nil ? "ws" : "wss")://127.0.0.1:\(port)" }

    /// `requiresAuthentication`: the relay challenges every connection with NIP-42 `AUTH` and
    /// checks the answer (signature, kind, time, `relay` and `challenge` tags); publishing stays
    /// open to everyone, and so does reading unless `authenticatedReaders` names keys: then a `REQ`
    /// is refused (with a `NOTICE`) until the connection authenticated as one of them. nostr-relay
    /// never answers an `AUTH` with `OK`.
    init(requiresAuthentication: Bool = false, authenticatedReaders: [String] = [], tls: Bool = false) throws {
        port = try freeLoopbackPort()
        scratch = try ScratchDirectory()
        self.requiresAuthentication = requiresAuthentication || !authenticatedReaders.isEmpty
        self.authenticatedReaders = authenticatedReaders
        certificates = tls ? try APNsTestCertificates.shared() : nil
        logPath = scratch.directory.appendingPathComponent("relay.log").path
        try start()
        // The role table exists once the relay has started; roles are read at each AUTH.
        for reader in authenticatedReaders {
            let result = try ToolProcess.run(
                URL(fileURLWithPath: "/usr/bin/env"),
                ["nostr-relay", "-c", configurationPath, "role", "set", "-p", reader, "-r", "r"])
            guard result.status == 0, result.outputText.contains("Set roles") else {
                stop()
                throw RelayDidNotStart(log: log + result.outputText + result.errors)
            }
        }
    }

    private var configurationPath: String { scratch.directory.appendingPathComponent("relay.yaml").path }

    deinit { stop() }

    /// The relay's own log (its lines, not the gateway's: it names pubkeys as relays do).
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    func start() throws {
        let directory = scratch.directory.path
        let tlsFiles =
            certificates.map {
                "  ssl_certfile: \($0.serverCertificateFile)\n  ssl_keyfile: \($0.serverKeyFile)\n"
            } ?? ""
        let configuration = """
            DEBUG: false
            relay_name: push-gateway test relay
            storage:
              sqlalchemy.url: sqlite+aiosqlite:///\(directory)/relay.sqlite3
              num_concurrent_reqs: 4
              num_concurrent_adds: 1
              validators:
                - nostr_relay.validators.is_not_too_large
                - nostr_relay.validators.is_signed
            verification:
              nip05_verification: disabled
            gunicorn:
              bind: 127.0.0.1:\(port)
              workers: 1
              loglevel: warning
              reload: false
            \(tlsFiles)authentication:
              enabled: \(requiresAuthentication)
              relay_urls:
                - \(url)
              actions:
                save: a
                query: \(authenticatedReaders.isEmpty ? "a" : "r")
            message_timeout: 1800
            subscription_limit: 32
            max_limit: 6000
            hellthread_limit: 100
            max_event_size: 200000

            """
        let path = try scratch.file("relay.yaml", text: configuration)
        FileManager.default.createFile(atPath: logPath, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        output.seekToEndOfFile()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["nostr-relay", "-c", path, "serve", "--use-uvicorn"]
        process.currentDirectoryURL = scratch.directory
        process.standardOutput = output
        process.standardError = output
        try process.run()
        self.process = process
        guard
            eventually(
                within: 30, every: 0.2,
                {
                    (try? TCPConnector.connect(to: SocketAddress(parsing: "127.0.0.1:\(port)"))) != nil
                })
        else {
            stop()
            throw RelayDidNotStart(log: log)
        }
    }

    /// Stops the relay (the connection drops); `start()` brings it back on the same port with the
    /// same stored events.
    func stop() {
        guard let process else { return }
        self.process = nil
        guard process.isRunning else { return }
        // uvicorn's graceful shutdown can wait on open connections: kill it when it lingers.
        process.interrupt()
        if !eventually(within: 3, { !process.isRunning }) { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    struct RelayDidNotStart: Error, CustomStringConvertible {
        let log: String
        var description: String { "nostr-relay did not start:\n\(log)" }
    }
}
