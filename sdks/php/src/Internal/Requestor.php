<?php

declare(strict_types=1);

namespace Pagamentos\Internal;

use Pagamentos\Client;
use Pagamentos\Exception\ApiException;
use Pagamentos\Exception\ConnectionException;
use Pagamentos\Exception\InvalidArgumentException;
use Pagamentos\Response;

/**
 * Sends a request the way every call of the SDK is sent: with an Idempotency-Key on every
 * mutating request (the caller's, or a random one) that every retry reuses, so a retry can
 * never apply a payment twice; and with retries on what another attempt can fix.
 *
 * Retried: connection errors and timeouts, 409 IDEMPOTENCY_KEY_IN_USE, 429, 500, 502, 503, 504.
 * Never: any other 4xx (the same request gets the same answer), nor 501 (not implemented will
 * not become implemented). A `Retry-After` of up to 60 s is waited exactly; a longer one is not
 * waited inside a call: the exception carries it (`$retryAfter`) for the caller to schedule.
 * Otherwise the wait doubles from 0.5 s up to 8 s, less up to a quarter of jitter.
 *
 * @internal
 */
final class Requestor
{
    public const MAX_RETRY_AFTER_SECONDS = 60.0;
    public const INITIAL_RETRY_DELAY_SECONDS = 0.5;
    public const MAX_RETRY_DELAY_SECONDS = 8.0;
    private const RETRYABLE_STATUSES = [429, 500, 502, 503, 504];

    private readonly CurlTransport $transport;

    public function __construct(
        private readonly string $apiKey,
        private readonly string $baseUrl,
        private readonly float $timeoutSeconds,
        private readonly float $connectTimeoutSeconds,
        private readonly int $maxRetries,
    ) {
        $this->transport = new CurlTransport();
    }

    /**
     * @param array<string, mixed> $query
     * @param array<string, mixed>|null $body null: no body
     * @param array<string, mixed> $options idempotencyKey, timeout, maxRetries
     */
    public function request(string $method, string $path, array $query, ?array $body, array $options): Response
    {
        $options = Options::request($options);
        $method = strtoupper($method);
        if (preg_match('/^[A-Z]+$/', $method) !== 1) {
            throw new InvalidArgumentException(sprintf('"%s" is not an HTTP method.', $method));
        }
        if (!str_starts_with($path, '/')) {
            throw new InvalidArgumentException(sprintf('The path must start with "/", got "%s".', $path));
        }
        $mutating = !in_array($method, ['GET', 'HEAD', 'OPTIONS'], true);
        $key = $options['idempotencyKey'] ?? ($mutating ? self::newIdempotencyKey() : null);
        $timeout = $options['timeout'] ?? $this->timeoutSeconds;
        $maxRetries = $options['maxRetries'] ?? $this->maxRetries;
        $url = $this->baseUrl . $path . ($query === [] ? '' : '?' . self::queryString($query));
        $payload = $body === null ? null : self::json($body);

        $headers = [
            'Authorization: Bearer ' . $this->apiKey,
            'Accept: application/json',
            'User-Agent: ' . sprintf('pagamentos-php/%s PHP/%s', Client::VERSION, PHP_VERSION),
            'Expect:', // no 100-continue round trip before larger bodies
        ];
        if ($key !== null) {
            $headers[] = 'Idempotency-Key: ' . $key;
        }
        // A body-less POST (cancel) goes without a Content-Type: curl would otherwise label the
        // empty body application/x-www-form-urlencoded, which the API refuses with 415.
        $headers[] = $payload === null ? 'Content-Type:' : 'Content-Type: application/json';

        for ($attempt = 1;; $attempt++) {
            try {
                [$status, $responseHeaders, $responseBody] = $this->transport->send(
                    $method,
                    $url,
                    $headers,
                    $payload,
                    $timeout,
                    $this->connectTimeoutSeconds,
                );
            } catch (ConnectionException $e) {
                if (!$e->retryable || $attempt > $maxRetries) {
                    throw $e->withAttempts($attempt, $key);
                }
                self::sleep(self::backoffSeconds($attempt));
                continue;
            }
            $response = new Response($status, $responseHeaders, $responseBody, $key, $attempt);
            if ($status >= 200 && $status < 300) {
                return $response;
            }
            $delay = $attempt <= $maxRetries ? self::retryDelaySeconds($response, $attempt) : null;
            if ($delay === null) {
                throw ApiException::fromResponse($response);
            }
            self::sleep($delay);
        }
    }

    /** Seconds to wait before retrying this answer, or null when it must not be retried. */
    public static function retryDelaySeconds(Response $response, int $attempt): ?float
    {
        $retryable = in_array($response->status, self::RETRYABLE_STATUSES, true)
            || ($response->status === 409 && self::errorCode($response) === 'IDEMPOTENCY_KEY_IN_USE');
        if (!$retryable) {
            return null;
        }
        $retryAfter = $response->retryAfterSeconds();
        if ($retryAfter === null) {
            return self::backoffSeconds($attempt);
        }
        return $retryAfter <= self::MAX_RETRY_AFTER_SECONDS ? $retryAfter : null;
    }

    /** 0.5 s, 1 s, 2 s, ... up to 8 s, each less up to 25 % of jitter. */
    public static function backoffSeconds(int $attempt): float
    {
        $delay = min(self::INITIAL_RETRY_DELAY_SECONDS * 2 ** ($attempt - 1), self::MAX_RETRY_DELAY_SECONDS);
        return $delay * (1 - random_int(0, 250) / 1000);
    }

    public static function newIdempotencyKey(): string
    {
        $bytes = random_bytes(16);
        $bytes[6] = chr(ord($bytes[6]) & 0x0f | 0x40);
        $bytes[8] = chr(ord($bytes[8]) & 0x3f | 0x80);
        return vsprintf('%s%s-%s-%s-%s-%s%s%s', str_split(bin2hex($bytes), 4));
    }

    private static function errorCode(Response $response): ?string
    {
        $decoded = json_decode($response->body, true);
        $code = is_array($decoded) && is_array($decoded['error'] ?? null) ? ($decoded['error']['code'] ?? null) : null;
        return is_string($code) ? $code : null;
    }

    private static function sleep(float $seconds): void
    {
        // Whole seconds apart: usleep() of a second or more is not portable.
        if ($seconds >= 1) {
            sleep((int) $seconds);
            $seconds -= (int) $seconds;
        }
        if ($seconds > 0) {
            usleep((int) round($seconds * 1_000_000));
        }
    }

    /** @param array<string, mixed> $query */
    private static function queryString(array $query): string
    {
        $pairs = [];
        foreach ($query as $name => $value) {
            if ($value === null) {
                continue;
            }
            $text = match (true) {
                is_bool($value) => $value ? 'true' : 'false',
                is_int($value), is_float($value), is_string($value) => (string) $value,
                $value instanceof \DateTimeInterface => \DateTimeImmutable::createFromInterface($value)
                    ->setTimezone(new \DateTimeZone('UTC'))->format('Y-m-d\TH:i:s.v\Z'),
                default => throw new InvalidArgumentException(sprintf(
                    'List parameter "%s" must be a string, number, boolean or DateTimeInterface, got %s.',
                    $name,
                    get_debug_type($value),
                )),
            };
            $pairs[] = rawurlencode((string) $name) . '=' . rawurlencode($text);
        }
        return implode('&', $pairs);
    }

    /** @param array<string, mixed> $body */
    private static function json(array $body): string
    {
        // PHP's [] is a JSON list; the API wants objects where an empty map is meant.
        if (isset($body['metadata']) && $body['metadata'] === []) {
            $body['metadata'] = new \stdClass();
        }
        try {
            $json = json_encode(
                $body === [] ? new \stdClass() : $body,
                JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE,
            );
        } catch (\JsonException $e) {
            throw new InvalidArgumentException('The request parameters cannot be sent as JSON: ' . $e->getMessage());
        }
        return $json;
    }
}
