<?php

declare(strict_types=1);

namespace Pagamentos\Tests\Support;

/**
 * A mutating request the real server has run but not finished answering, so that its
 * Idempotency-Key stays in use (409 IDEMPOTENCY_KEY_IN_USE for any other request with it) until
 * release(): a key in use without racing two requests and without any timing.
 *
 * The server holds a key from the start of a request until its answer is written out (the
 * response's close), not until the client reads it; and it answers the requests pipelined on one
 * connection in order. So the request goes on a connection of its own behind enough GETs of the
 * OpenAPI document that their answers exceed what the kernel can buffer (the server's send
 * buffer at its largest, tcp_wmem, and this side's small receive buffer) while nothing is read:
 * the first answer is never written out, and the held request's answer waits behind it.
 */
final class HeldRequest
{
    private const DOCUMENT = '/v1/openapi.json';
    private const RECEIVE_BUFFER_BYTES = 8192;

    private function __construct(private readonly \Socket $socket)
    {
    }

    /**
     * Sends `$method $path` with this JSON body and key, and returns at once. The server runs it
     * in the background: wait for its effect (a listed payment, say) before counting on the key
     * being held.
     *
     * @param array<string, mixed> $body
     */
    public static function send(
        string $baseUrl,
        string $secretKey,
        string $method,
        string $path,
        array $body,
        string $idempotencyKey,
    ): self {
        $host = (string) parse_url($baseUrl, PHP_URL_HOST);
        $port = (int) parse_url($baseUrl, PHP_URL_PORT);

        $handle = curl_init($baseUrl . self::DOCUMENT);
        curl_setopt($handle, CURLOPT_RETURNTRANSFER, true);
        $documentBytes = strlen((string) curl_exec($handle));
        if ($documentBytes < 10_000) {
            throw new \RuntimeException('The OpenAPI document is too small to hold a request behind it.');
        }
        // Twice what the kernel can hold of the answers, in whole documents.
        $copies = intdiv(2 * (self::largestSendBuffer() + 2 * self::RECEIVE_BUFFER_BYTES), $documentBytes) + 2;

        $socket = socket_create(AF_INET, SOCK_STREAM, SOL_TCP);
        if ($socket === false) {
            throw new \RuntimeException('socket_create: ' . socket_strerror(socket_last_error()));
        }
        // Set before connecting (the window is agreed then); a set size also stops autotuning.
        socket_set_option($socket, SOL_SOCKET, SO_RCVBUF, self::RECEIVE_BUFFER_BYTES);
        if (!socket_connect($socket, $host, $port)) {
            throw new \RuntimeException('socket_connect: ' . socket_strerror(socket_last_error($socket)));
        }
        $json = json_encode($body, JSON_THROW_ON_ERROR);
        $requests = str_repeat(sprintf("GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", self::DOCUMENT, $host), $copies)
            . sprintf("%s %s HTTP/1.1\r\n", $method, $path)
            . sprintf("Host: %s\r\n", $host)
            . sprintf("Authorization: Bearer %s\r\n", $secretKey)
            . "Content-Type: application/json\r\n"
            . sprintf("Idempotency-Key: %s\r\n", $idempotencyKey)
            . sprintf("Content-Length: %d\r\n", strlen($json))
            . "Connection: close\r\n\r\n"
            . $json;
        // In one write (a few KB): the server reads and starts every request before it answers
        // any, so the held one is not left unread behind answers that cannot be sent.
        for ($sent = 0; $sent < strlen($requests); $sent += $written) {
            $written = socket_write($socket, substr($requests, $sent));
            if ($written === false) {
                throw new \RuntimeException('socket_write: ' . socket_strerror(socket_last_error($socket)));
            }
        }
        return new self($socket);
    }

    /**
     * Reads every answer to the end, which lets the server finish the held request; returns the
     * held request's answer. Once it is read, the server no longer holds the key.
     *
     * @return array{int, string} status, body
     */
    public function release(): array
    {
        $received = '';
        while (($chunk = socket_read($this->socket, 1 << 16)) !== false && $chunk !== '') {
            $received .= $chunk;
        }
        socket_close($this->socket);

        $answer = null;
        for ($offset = 0; $offset < strlen($received); $offset = $end) {
            $headEnd = strpos($received, "\r\n\r\n", $offset);
            if ($headEnd === false) {
                throw new \RuntimeException('An answer was cut short.');
            }
            $head = substr($received, $offset, $headEnd - $offset);
            if (
                preg_match('#^HTTP/1\.1 (\d{3})#', $head, $status) !== 1
                || preg_match('/^content-length: *(\d+)/mi', $head, $length) !== 1
            ) {
                throw new \RuntimeException('An answer without a status or Content-Length: ' . $head);
            }
            $end = $headEnd + 4 + (int) $length[1];
            $answer = [(int) $status[1], substr($received, $headEnd + 4, (int) $length[1])];
        }
        if ($answer === null) {
            throw new \RuntimeException('No answer at all.');
        }
        return $answer;
    }

    /** The most the kernel lets a TCP send buffer grow to (Linux: tcp_wmem's maximum). */
    private static function largestSendBuffer(): int
    {
        $limits = preg_split('/\s+/', trim((string) @file_get_contents('/proc/sys/net/ipv4/tcp_wmem')));
        $largest = (int) ($limits[2] ?? 0);
        return $largest > 0 ? $largest : 4 * 1024 * 1024;
    }
}
