<?php

declare(strict_types=1);

namespace Pagamentos\Internal;

use Pagamentos\Exception\ConnectionException;
use Pagamentos\Exception\TimeoutException;

/**
 * One HTTP exchange through curl, nothing more: retries and errors are the Requestor's.
 * One handle per client, so connections are kept alive between calls.
 *
 * @internal
 */
final class CurlTransport
{
    /**
     * curl errors after which another attempt can succeed: resolving, connecting, a connection
     * dropped or reset, a timeout, a TLS handshake cut short. Not: a malformed URL, an
     * unsupported protocol, a certificate that does not verify.
     */
    private const RETRYABLE_ERRNOS = [
        CURLE_COULDNT_RESOLVE_HOST,
        CURLE_COULDNT_CONNECT,
        16, // CURLE_HTTP2
        CURLE_PARTIAL_FILE,
        CURLE_OPERATION_TIMEDOUT,
        CURLE_SSL_CONNECT_ERROR,
        CURLE_GOT_NOTHING,
        CURLE_SEND_ERROR,
        CURLE_RECV_ERROR,
        92, // CURLE_HTTP2_STREAM
    ];

    private ?\CurlHandle $handle = null;

    /**
     * @param list<string> $headers lines "Name: value"
     * @return array{int, array<string, list<string>>, string} status, headers (lowercase names), body
     */
    public function send(
        string $method,
        string $url,
        array $headers,
        ?string $body,
        float $timeoutSeconds,
        float $connectTimeoutSeconds,
    ): array {
        $handle = $this->handle ??= curl_init();
        curl_reset($handle);

        $received = [];
        $options = [
            CURLOPT_URL => $url,
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_FOLLOWLOCATION => false,
            CURLOPT_NOSIGNAL => true,
            CURLOPT_TIMEOUT_MS => (int) ceil($timeoutSeconds * 1000),
            CURLOPT_CONNECTTIMEOUT_MS => (int) ceil(min($connectTimeoutSeconds, $timeoutSeconds) * 1000),
            CURLOPT_HTTPHEADER => $headers,
            CURLOPT_HEADERFUNCTION => static function ($handle, string $line) use (&$received): int {
                if (str_starts_with($line, 'HTTP/')) {
                    $received = []; // a new status line (after a 100 Continue): start over
                } elseif (str_contains($line, ':')) {
                    [$name, $value] = explode(':', $line, 2);
                    $received[strtolower(trim($name))][] = trim($value);
                }
                return strlen($line);
            },
        ];
        if ($method === 'GET') {
            $options[CURLOPT_HTTPGET] = true;
        } elseif ($method === 'POST') {
            $options[CURLOPT_POST] = true;
            $options[CURLOPT_POSTFIELDS] = $body ?? '';
        } else {
            $options[CURLOPT_CUSTOMREQUEST] = $method;
            if ($body !== null) {
                $options[CURLOPT_POSTFIELDS] = $body;
            }
        }
        curl_setopt_array($handle, $options);

        $result = curl_exec($handle);
        if (!is_string($result)) {
            $errno = curl_errno($handle);
            $host = (string) parse_url($url, PHP_URL_HOST);
            if ($errno === CURLE_OPERATION_TIMEDOUT) {
                throw new TimeoutException(
                    sprintf('No answer from %s within %s s (%s).', $host, $timeoutSeconds, curl_error($handle)),
                    $errno,
                    true,
                );
            }
            throw new ConnectionException(
                sprintf('Could not get an answer from %s: %s (curl error %d).', $host, curl_error($handle), $errno),
                $errno,
                in_array($errno, self::RETRYABLE_ERRNOS, true),
            );
        }
        return [(int) curl_getinfo($handle, CURLINFO_RESPONSE_CODE), $received, $result];
    }
}
