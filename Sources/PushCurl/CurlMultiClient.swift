internal import CCurl
public import PushSystem

/// An asynchronous HTTPS client on libcurl's multi interface for many origins at once
/// (docs/decisions/0790): HTTP/2 by ALPN or HTTP/1.1, whichever the server offers; requests
/// multiplexed and connections reused per origin, never coalesced across hosts; every connection
/// to the caller's checked address only; no redirects, no proxy from the environment, no
/// `Alt-Svc`. It is driven by one PushSystem `EventLoop` (its sockets and libcurl's timer are the
/// loop's registrations and timers); `send` may be called from any thread and its completion runs
/// on the loop's thread.
// @unchecked Sendable: every stored var and the multi handle are touched only on `eventLoop`'s thread
// (`send` hops there with `execute`), except in `deinit`, which runs after the last reference is gone.
public final class CurlMultiClient: @unchecked Sendable {
    public struct Configuration: Sendable {
        /// `PUSH_GATEWAY_WEBPUSH_MAX_CONNECTIONS` (docs/protocol.md §8b).
        public var maximumConnections: Int
        /// An idle connection is closed after this long.
        public var idleConnectionTimeout: Duration
        /// A longer response head (status line and fields) ends the connection.
        public var maximumHeadBytes: Int
        /// A longer response body ends the connection.
        public var maximumBodyBytes: Int
        /// `http://host:port` of an HTTP CONNECT proxy; nil connects directly.
        public var proxy: String?
        /// A PEM file of extra trust anchors, added to the system's (test push services).
        public var extraTrustAnchorFile: String?
        /// The system's hashed trust-anchor directory, kept when an extra file is given.
        public var systemTrustAnchorDirectory: String

        public init(
            maximumConnections: Int = 512, idleConnectionTimeout: Duration = .seconds(60),
            maximumHeadBytes: Int = 16 * 1024, maximumBodyBytes: Int = 4 * 1024, proxy: String? = nil,
            extraTrustAnchorFile: String? = nil, systemTrustAnchorDirectory: String = "/etc/ssl/certs"
        ) {
            self.maximumConnections = maximumConnections
            self.idleConnectionTimeout = idleConnectionTimeout
            self.maximumHeadBytes = maximumHeadBytes
            self.maximumBodyBytes = maximumBodyBytes
            self.proxy = proxy
            self.extraTrustAnchorFile = extraTrustAnchorFile
            self.systemTrustAnchorDirectory = systemTrustAnchorDirectory
        }
    }

    public typealias Completion = @Sendable (Result<CurlMultiResponse, CurlMultiFailure>) -> Void

    public let eventLoop: EventLoop
    public let configuration: Configuration
    private var multi: UnsafeMutableRawPointer?
    private var transfers: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private var sockets: [Int32: EventLoop.Registration] = [:]
    private var libcurlTimer: TimerID?
    private var idleTimer: TimerID?
    private var isShutDown = false

    public init(eventLoop: EventLoop, configuration: Configuration = Configuration()) {
        self.eventLoop = eventLoop
        self.configuration = configuration
    }

    deinit {
        // The loop has no reference left to this client, so no callback can reach it: free the
        // transfers' easy handles before the multi handle, as libcurl requires.
        if let multi {
            // libcurl calls the socket and timer functions while cleaning up; with no context they
            // do nothing (the loop's registrations end with the loop).
            _ = CCurl_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, nil)
            _ = CCurl_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, nil)
            for easy in transfers.keys { curl_multi_remove_handle(multi, easy) }
            transfers.removeAll()
            curl_multi_cleanup(multi)
        }
    }

    /// Requests in progress (tests and metrics).
    public var inFlightCount: Int {
        precondition(eventLoop.inEventLoop, "read on the client's event loop")
        return transfers.count
    }

    /// Sends `request` to `pinnedAddress`, the address the caller checked, to be complete (connect,
    /// TLS, request, response) by `deadline`; `completion` runs once, on the event loop's thread.
    public func send(
        _ request: CurlMultiRequest, to pinnedAddress: CurlPinnedAddress, before deadline: MonotonicInstant,
        completion: @escaping Completion
    ) {
        let queued = eventLoop.execute { [self] in
            start(request, to: pinnedAddress, before: deadline, completion: completion)
        }
        if !queued { completion(.failure(CurlMultiFailure(.unavailable, description: "the client is shut down"))) }
    }

    /// Ends every request in progress with `unavailable` and closes every connection; later sends
    /// fail. Call on the loop's thread, or from outside before shutting the loop down.
    public func shutdown() {
        guard eventLoop.inEventLoop else {
            let latch = CompletionLatch()
            if eventLoop.execute({ [self] in
                shutdown()
                latch.open()
            }) {
                latch.wait()
            }
            return
        }
        isShutDown = true
        let ending = transfers
        closeMulti()
        for transfer in ending.values {
            transfer.completion(.failure(CurlMultiFailure(.unavailable, description: "the client is shut down")))
        }
    }

    // MARK: Loop thread

    private func start(
        _ request: CurlMultiRequest, to pinnedAddress: CurlPinnedAddress, before deadline: MonotonicInstant,
        completion: @escaping Completion
    ) {
        guard !isShutDown, let multi = openMulti() else {
            completion(.failure(CurlMultiFailure(.unavailable, description: "the client is shut down")))
            return
        }
        let transfer: CurlTransfer
        do {
            transfer = try CurlTransfer(
                request: request, pinnedAddress: pinnedAddress, deadline: deadline, configuration: configuration,
                completion: completion)
        } catch {
            completion(.failure(error))
            return
        }
        if let idleTimer {
            eventLoop.cancel(idleTimer)
            self.idleTimer = nil
        }
        transfers[transfer.easy] = transfer
        guard curl_multi_add_handle(multi, transfer.easy) == CURLM_OK else {
            transfers[transfer.easy] = nil
            completion(.failure(CurlMultiFailure(.unavailable, description: "libcurl refused the transfer")))
            return
        }
    }

    private func openMulti() -> UnsafeMutableRawPointer? {
        if let multi { return multi }
        guard CurlGlobal.initialized, let created = curl_multi_init() else { return nil }
        let context = Unmanaged.passUnretained(self).toOpaque()
        let connections = configuration.maximumConnections
        let results: [CURLMcode] = [
            CCurl_multi_setopt_long(created, CURLMOPT_MAX_TOTAL_CONNECTIONS, connections),
            CCurl_multi_setopt_long(created, CURLMOPT_MAXCONNECTS, connections),
            CCurl_multi_setopt_long(created, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX),
            CCurl_multi_setopt_pointer(created, CURLMOPT_SOCKETDATA, context),
            CCurl_multi_setopt_pointer(created, CURLMOPT_TIMERDATA, context),
            CCurl_multi_setopt_socket_function(created) { _, socket, what, context, _ in
                guard let context else { return 0 }
                Unmanaged<CurlMultiClient>.fromOpaque(context).takeUnretainedValue().watch(socket, what: what)
                return 0
            },
            CCurl_multi_setopt_timer_function(created) { _, milliseconds, context in
                guard let context else { return 0 }
                Unmanaged<CurlMultiClient>.fromOpaque(context).takeUnretainedValue().setTimer(milliseconds)
                return 0
            },
        ]
        guard results.allSatisfy({ $0 == CURLM_OK }) else {
            curl_multi_cleanup(created)
            return nil
        }
        multi = created
        return created
    }

    /// Closes the multi handle and with it every connection; the next request opens a new one.
    private func closeMulti() {
        guard let multi else { return }
        for easy in transfers.keys { curl_multi_remove_handle(multi, easy) }
        transfers.removeAll()
        curl_multi_cleanup(multi)
        self.multi = nil
        for registration in sockets.values { eventLoop.deregister(registration) }
        sockets.removeAll()
        if let libcurlTimer { eventLoop.cancel(libcurlTimer) }
        libcurlTimer = nil
        if let idleTimer { eventLoop.cancel(idleTimer) }
        idleTimer = nil
    }

    /// CURLMOPT_SOCKETFUNCTION: libcurl says which events it waits for on `socket` (before closing
    /// it, CURL_POLL_REMOVE).
    private func watch(_ socket: Int32, what: Int32) {
        if what == CURL_POLL_REMOVE {
            if let registration = sockets.removeValue(forKey: socket) { eventLoop.deregister(registration) }
            return
        }
        var events: EpollEvents = []
        if what & CURL_POLL_IN != 0 { events.insert(.readable) }
        if what & CURL_POLL_OUT != 0 { events.insert(.writable) }
        if let registration = sockets[socket] {
            try? eventLoop.modify(registration, for: events)
            return
        }
        // Weak: a client dropped without `shutdown()` must not be reached by the loop afterwards.
        let registration = try? eventLoop.register(socket, for: events) { [weak self] ready in
            guard let self else { return }
            var mask: Int32 = 0
            if ready.contains(.readable) || ready.contains(.readHangup) || ready.contains(.hangup) {
                mask |= CURL_CSELECT_IN
            }
            if ready.contains(.writable) { mask |= CURL_CSELECT_OUT }
            if ready.contains(.error) { mask |= CURL_CSELECT_ERR }
            self.act(on: socket, mask: mask)
        }
        if let registration { sockets[socket] = registration }
    }

    /// CURLMOPT_TIMERFUNCTION: libcurl wants `socket_action(CURL_SOCKET_TIMEOUT)` after
    /// `milliseconds` (-1: never). It must not be called from inside this callback, so it is a timer.
    private func setTimer(_ milliseconds: Int) {
        if let libcurlTimer { eventLoop.cancel(libcurlTimer) }
        libcurlTimer = nil
        guard milliseconds >= 0 else { return }
        libcurlTimer = eventLoop.schedule(after: .milliseconds(milliseconds)) { [weak self] in
            guard let self else { return }
            libcurlTimer = nil
            act(on: CURL_SOCKET_TIMEOUT, mask: 0)
        }
    }

    private func act(on socket: Int32, mask: Int32) {
        guard let multi else { return }
        var running: Int32 = 0
        _ = curl_multi_socket_action(multi, socket, mask, &running)
        finishDone(multi)
    }

    private func finishDone(_ multi: UnsafeMutableRawPointer) {
        var queued: Int32 = 0
        while let message = curl_multi_info_read(multi, &queued) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result
            curl_multi_remove_handle(multi, easy)
            guard let transfer = transfers.removeValue(forKey: easy) else { continue }
            transfer.completion(transfer.result(code))
        }
        if transfers.isEmpty, idleTimer == nil {
            // libcurl closes a connection older than CURLOPT_MAXAGE_CONN only when it next looks
            // for one; a client with nothing in flight closes them all itself.
            idleTimer = eventLoop.schedule(after: configuration.idleConnectionTimeout) { [weak self] in
                guard let self else { return }
                idleTimer = nil
                if transfers.isEmpty { closeMulti() }
            }
        }
    }
}

/// One request's easy handle and everything libcurl reads through pointers while it runs: the
/// header and connect-to lists and the transfer itself (the callbacks' context). The client keeps
/// it in `transfers` from `curl_multi_add_handle` to after `curl_multi_remove_handle`, libcurl's
/// last read; `deinit` frees the handle and the lists.
final class CurlTransfer {
    let easy: UnsafeMutableRawPointer
    let completion: CurlMultiClient.Completion
    private let pinned: CurlPinnedAddress
    private let direct: Bool
    private let maximumHeadBytes: Int
    private let maximumBodyBytes: Int
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var connectToList: UnsafeMutablePointer<curl_slist>?
    private var headBytes = 0
    private var bodyBytes = 0
    private var retryAfter: String?
    private var tooLarge = false
    private var vetoed = false

    init(
        request: CurlMultiRequest, pinnedAddress: CurlPinnedAddress, deadline: MonotonicInstant,
        configuration: CurlMultiClient.Configuration, completion: @escaping CurlMultiClient.Completion
    ) throws(CurlMultiFailure) {
        guard let easy = curl_easy_init() else {
            throw CurlMultiFailure(.unavailable, description: "libcurl handle allocation failed")
        }
        self.easy = easy
        self.completion = completion
        pinned = pinnedAddress
        direct = configuration.proxy == nil
        maximumHeadBytes = configuration.maximumHeadBytes
        maximumBodyBytes = configuration.maximumBodyBytes
        try configure(request, deadline: deadline, configuration)
    }

    deinit {
        curl_easy_cleanup(easy)
        curl_slist_free_all(headerList)
        curl_slist_free_all(connectToList)
    }

    private func configure(
        _ request: CurlMultiRequest, deadline: MonotonicInstant, _ configuration: CurlMultiClient.Configuration
    )
        throws(CurlMultiFailure)
    {
        for header in request.headers + ["Expect:"] {
            guard let appended = curl_slist_append(headerList, header) else {
                throw CurlMultiFailure(.unavailable, description: "libcurl header list allocation failed")
            }
            headerList = appended
        }
        guard let connectTo = curl_slist_append(nil, pinned.connectToEntry) else {
            throw CurlMultiFailure(.unavailable, description: "libcurl list allocation failed")
        }
        connectToList = connectTo
        let remaining = MonotonicInstant.now().duration(to: deadline).nanosecondsClamped / 1_000_000
        let context = Unmanaged.passUnretained(self).toOpaque()
        let idleSeconds = Int(configuration.idleConnectionTimeout.components.seconds)
        var results: [CURLcode] = [
            CCurl_setopt_string(easy, CURLOPT_URL, request.url),
            CCurl_setopt_pointer(easy, CURLOPT_PRIVATE, context),
            CCurl_setopt_long(easy, CURLOPT_NOSIGNAL, 1),
            CCurl_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "https"),
            CCurl_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0),
            // docs/protocol.md §8b: no Alt-Svc. libcurl reads Alt-Svc only with CURLOPT_ALTSVC_CTRL
            // set (it refuses 0), and HSTS only with CURLOPT_HSTS_CTRL; neither is ever set.
            CCurl_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS)),
            // Wait for a multiplexed connection of the origin rather than opening another.
            CCurl_setopt_long(easy, CURLOPT_PIPEWAIT, 1),
            CCurl_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 1),
            CCurl_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 2),
            CCurl_setopt_long(easy, CURLOPT_TIMEOUT_MS, Int(max(1, remaining))),
            CCurl_setopt_long(easy, CURLOPT_MAXAGE_CONN, max(1, idleSeconds)),
            // "" disables every proxy, the environment's included.
            CCurl_setopt_string(easy, CURLOPT_PROXY, configuration.proxy ?? ""),
            CCurl_setopt_slist(easy, CURLOPT_CONNECT_TO, connectToList),
            CCurl_setopt_slist(easy, CURLOPT_HTTPHEADER, headerList),
            CCurl_setopt_long(easy, CURLOPT_POST, 1),
            CCurl_setopt_long(easy, CURLOPT_POSTFIELDSIZE, request.body.count),
            CCurl_setopt_pointer(easy, CURLOPT_HEADERDATA, context),
            CCurl_setopt_header_function(easy) { data, size, count, context in
                guard let data, let context else { return 0 }
                return Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue().receiveHead(
                    UnsafeRawBufferPointer(start: data, count: size * count))
            },
            CCurl_setopt_pointer(easy, CURLOPT_WRITEDATA, context),
            CCurl_setopt_write_function(easy) { _, size, count, context in
                guard let context else { return 0 }
                return Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue().receiveBody(size * count)
            },
            CCurl_setopt_pointer(easy, CURLOPT_OPENSOCKETDATA, context),
            CCurl_setopt_opensocket_function(easy) { context, _, address in
                guard let context, let address else { return CURL_SOCKET_BAD }
                let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
                guard transfer.permitsSocket(to: address) else { return CURL_SOCKET_BAD }
                return CCurl_open_socket(address)
            },
        ]
        if let proxy = configuration.proxy {
            results += [
                CCurl_setopt_string(easy, CURLOPT_PROXY, proxy),
                CCurl_setopt_long(easy, CURLOPT_HTTPPROXYTUNNEL, 1),
                CCurl_setopt_long(easy, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1),
            ]
        }
        if let extra = configuration.extraTrustAnchorFile {
            results += [
                CCurl_setopt_string(easy, CURLOPT_CAINFO, extra),
                CCurl_setopt_string(easy, CURLOPT_CAPATH, configuration.systemTrustAnchorDirectory),
            ]
        }
        // CURLOPT_COPYPOSTFIELDS copies the bytes, so no pointer into `body` outlives this call.
        let fields = request.body.isEmpty ? [0] : request.body
        results.append(
            fields.withUnsafeBytes { raw in
                CCurl_setopt_pointer(easy, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: raw.baseAddress))
            })
        if let failed = results.first(where: { $0 != CURLE_OK }) {
            throw CurlMultiFailure(.unavailable, description: Self.text(failed))
        }
    }

    /// In direct mode a socket may go to the pinned address and port only, whatever libcurl was
    /// told; through a proxy it goes to the operator's proxy, which gets the pinned literal in CONNECT.
    private func permitsSocket(to address: UnsafeMutablePointer<curl_sockaddr>) -> Bool {
        guard direct else { return true }
        var bytes = [UInt8](repeating: 0, count: 16)
        var port: Int32 = 0
        let count = Int(CCurl_socket_address(address, &bytes, &port))
        if count == pinned.addressBytes.count, Array(bytes.prefix(count)) == pinned.addressBytes,
            Int(port) == pinned.port
        {
            return true
        }
        vetoed = true
        return false
    }

    private func receiveHead(_ line: UnsafeRawBufferPointer) -> Int {
        headBytes += line.count
        guard headBytes <= maximumHeadBytes else { return refuseOversized() }
        let text = String(decoding: line, as: UTF8.self)
        if text.hasPrefix("HTTP/") {
            // A new response head (after a 1xx): only the final one's fields count.
            retryAfter = nil
        } else if let colon = text.firstIndex(of: ":"),
            text[..<colon].lowercased() == "retry-after"
        {
            retryAfter = text[text.index(after: colon)...].trimmingSpaces
        }
        return line.count
    }

    private func receiveBody(_ length: Int) -> Int {
        bodyBytes += length
        guard bodyBytes <= maximumBodyBytes else { return refuseOversized() }
        return length
    }

    /// Ends the transfer and keeps its connection out of reuse (docs/protocol.md §8b).
    private func refuseOversized() -> Int {
        tooLarge = true
        _ = CCurl_setopt_long(easy, CURLOPT_FORBID_REUSE, 1)
        return 0
    }

    func result(_ code: CURLcode) -> Result<CurlMultiResponse, CurlMultiFailure> {
        if tooLarge {
            return .failure(CurlMultiFailure(.responseTooLarge, description: "the response exceeded its size limit"))
        }
        if vetoed {
            return .failure(
                CurlMultiFailure(.addressVetoed, description: "a connection to an address other than the checked one"))
        }
        if code == CURLE_OPERATION_TIMEDOUT {
            return .failure(CurlMultiFailure(.timeout, description: Self.text(code)))
        }
        guard code == CURLE_OK else { return .failure(CurlMultiFailure(.transport, description: Self.text(code))) }
        var status = 0
        var version = 0
        guard CCurl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK, status > 0 else {
            return .failure(CurlMultiFailure(.transport, description: "no HTTP status was received"))
        }
        _ = CCurl_getinfo_long(easy, CURLINFO_HTTP_VERSION, &version)
        let httpVersion = version == Int(CURL_HTTP_VERSION_2_0) ? 20 : 11
        return .success(CurlMultiResponse(status: status, retryAfter: retryAfter, httpVersion: httpVersion))
    }

    static func text(_ code: CURLcode) -> String {
        curl_easy_strerror(code).map { String(cString: $0) } ?? "libcurl error \(code.rawValue)"
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r\n" || $0 == "\r" || $0 == "\n" }
        return String(self.drop(while: blank).reversed().drop(while: blank).reversed())
    }
}
