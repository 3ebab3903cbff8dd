<?php

declare(strict_types=1);

namespace Pagamentos\Tests\Support;

/**
 * A small HTTP proxy between the SDK and the real API server, for the retry tests: it forwards
 * every request, except that it can be told, request by request, to misbehave the way networks
 * and gateways do. Run by fault-proxy.php <upstream base URL> <folder>.
 *
 * <folder>/port        the port it listens on (127.0.0.1), written once it listens
 * <folder>/script.json a list of actions, one taken per request, in order; forward when empty:
 *   {"do": "forward-then-drop"}  forward, then close the connection without answering
 *   {"do": "forward-then-hang"}  forward, then never answer (until the client gives up)
 *   {"do": "drop"}               close without forwarding
 *   {"do": "respond", "status": 503, "headers": {"Retry-After": "1"}, "body": "..."}
 *                                answer this instead of forwarding (a gateway or load balancer)
 * <folder>/requests.log one JSON line per request received
 */
final class FaultProxyServer
{
    public static function run(string $upstream, string $dir): void
    {
        $server = stream_socket_server('tcp://127.0.0.1:0', $errno, $error);
        if ($server === false) {
            fwrite(STDERR, "cannot listen: $error\n");
            exit(1);
        }
        $name = (string) stream_socket_get_name($server, false);
        file_put_contents($dir . '/port.tmp', substr($name, strrpos($name, ':') + 1));
        rename($dir . '/port.tmp', $dir . '/port');

        $held = [];
        while (true) {
            $read = array_merge([$server], array_values($held));
            $write = null;
            $except = null;
            if (@stream_select($read, $write, $except, null) === false) {
                continue;
            }
            foreach ($read as $socket) {
                if ($socket !== $server) {
                    // A held connection turned readable: its client gave up. Let it go.
                    unset($held[(int) $socket]);
                    fclose($socket);
                    continue;
                }
                $client = @stream_socket_accept($server, 30);
                if ($client === false) {
                    continue;
                }
                if (self::handle($client, $upstream, $dir)) {
                    $held[(int) $client] = $client;
                } else {
                    fclose($client);
                }
            }
        }
    }

    /**
     * @param resource $client
     * @return bool true to hold the connection open
     */
    private static function handle($client, string $upstream, string $dir): bool
    {
        stream_set_timeout($client, 30);
        $head = '';
        while (!str_ends_with($head, "\r\n\r\n")) {
            $line = fgets($client);
            if ($line === false) {
                return false;
            }
            $head .= $line;
        }
        $lines = explode("\r\n", trim($head));
        [$method, $path] = explode(' ', array_shift($lines));
        $headers = [];
        foreach ($lines as $line) {
            [$headerName, $value] = array_map('trim', explode(':', $line, 2));
            $headers[strtolower($headerName)] = $value;
        }
        $length = (int) ($headers['content-length'] ?? 0);
        $body = '';
        while (strlen($body) < $length) {
            $chunk = fread($client, $length - strlen($body));
            if ($chunk === false || $chunk === '') {
                return false;
            }
            $body .= $chunk;
        }

        $action = self::nextAction($dir) ?? ['do' => 'forward'];
        file_put_contents($dir . '/requests.log', json_encode([
            'method' => $method,
            'path' => $path,
            'headers' => $headers,
            'body' => $body,
            'action' => $action['do'],
        ]) . "\n", FILE_APPEND | LOCK_EX);

        switch ($action['do']) {
            case 'drop':
                return false;
            case 'respond':
                self::answer($client, $action['status'], $action['headers'] ?? [], $action['body'] ?? '');
                return false;
            case 'forward-then-drop':
                self::forward($upstream, $method, $path, $headers, $body);
                return false;
            case 'forward-then-hang':
                self::forward($upstream, $method, $path, $headers, $body);
                return true;
            default:
                [$status, $responseHeaders, $responseBody] = self::forward($upstream, $method, $path, $headers, $body);
                self::answer($client, $status, $responseHeaders, $responseBody);
                return false;
        }
    }

    /** @return array{string: mixed}|null */
    private static function nextAction(string $dir): ?array
    {
        $file = $dir . '/script.json';
        $actions = is_file($file) ? json_decode((string) file_get_contents($file), true) : [];
        if (!is_array($actions) || $actions === []) {
            return null;
        }
        $action = array_shift($actions);
        file_put_contents($file . '.tmp', json_encode($actions));
        rename($file . '.tmp', $file);
        return $action;
    }

    /**
     * @param array<string, string> $headers
     * @return array{int, array<string, string>, string}
     */
    private static function forward(string $upstream, string $method, string $path, array $headers, string $body): array
    {
        $send = [];
        foreach ($headers as $headerName => $value) {
            if (!in_array($headerName, ['host', 'connection', 'content-length', 'expect', 'keep-alive'], true)) {
                $send[] = $headerName . ': ' . $value;
            }
        }
        if (!isset($headers['content-type'])) {
            $send[] = 'Content-Type:'; // as received: none (curl would add a form type)
        }
        $received = [];
        $handle = curl_init($upstream . $path);
        curl_setopt_array($handle, [
            CURLOPT_CUSTOMREQUEST => $method,
            CURLOPT_HTTPHEADER => $send,
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_HEADERFUNCTION => static function ($handle, string $line) use (&$received): int {
                if (str_contains($line, ':')) {
                    [$headerName, $value] = explode(':', $line, 2);
                    $received[trim($headerName)] = trim($value);
                }
                return strlen($line);
            },
        ]);
        if ($method !== 'GET') {
            curl_setopt($handle, CURLOPT_POSTFIELDS, $body);
        }
        $responseBody = curl_exec($handle);
        if (!is_string($responseBody)) {
            return [502, ['Content-Type' => 'text/plain'], 'upstream: ' . curl_error($handle)];
        }
        return [(int) curl_getinfo($handle, CURLINFO_RESPONSE_CODE), $received, $responseBody];
    }

    /**
     * @param resource $client
     * @param array<string, string> $headers
     */
    private static function answer($client, int $status, array $headers, string $body): void
    {
        $out = sprintf("HTTP/1.1 %d Status\r\n", $status);
        foreach ($headers as $headerName => $value) {
            $lower = strtolower($headerName);
            if (!in_array($lower, ['connection', 'keep-alive', 'transfer-encoding', 'content-length'], true)) {
                $out .= $headerName . ': ' . $value . "\r\n";
            }
        }
        $out .= 'Content-Length: ' . strlen($body) . "\r\nConnection: close\r\n\r\n" . $body;
        fwrite($client, $out);
    }
}
