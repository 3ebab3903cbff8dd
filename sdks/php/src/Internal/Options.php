<?php

declare(strict_types=1);

namespace Pagamentos\Internal;

use Pagamentos\Exception\InvalidArgumentException;

/**
 * Checks the options of the client and of each call. An unknown key is an error, not a silent
 * no-op: `['idempotency_key' => ...]` must not quietly send a request without the caller's key.
 *
 * @internal
 */
final class Options
{
    public const DEFAULT_BASE_URL = 'http://localhost:3000';
    public const DEFAULT_TIMEOUT_SECONDS = 80.0;
    public const DEFAULT_CONNECT_TIMEOUT_SECONDS = 30.0;
    public const DEFAULT_MAX_RETRIES = 2;
    public const MAX_RETRIES_LIMIT = 10;

    /**
     * @param array<mixed> $options
     * @return array{baseUrl: string, timeout: float, connectTimeout: float, maxRetries: int}
     */
    public static function client(array $options): array
    {
        self::known($options, ['baseUrl', 'timeout', 'connectTimeout', 'maxRetries'], 'client option');
        return [
            'baseUrl' => self::baseUrl($options['baseUrl'] ?? self::DEFAULT_BASE_URL),
            'timeout' => self::seconds($options, 'timeout') ?? self::DEFAULT_TIMEOUT_SECONDS,
            'connectTimeout' => self::seconds($options, 'connectTimeout') ?? self::DEFAULT_CONNECT_TIMEOUT_SECONDS,
            'maxRetries' => self::maxRetries($options) ?? self::DEFAULT_MAX_RETRIES,
        ];
    }

    /**
     * @param array<mixed> $options
     * @return array{idempotencyKey: ?string, timeout: ?float, maxRetries: ?int}
     */
    public static function request(array $options): array
    {
        self::known($options, ['idempotencyKey', 'timeout', 'maxRetries'], 'request option');
        $key = $options['idempotencyKey'] ?? null;
        if ($key !== null && (!is_string($key) || preg_match('/^[\x20-\x7E]{1,255}$/', $key) !== 1)) {
            throw new InvalidArgumentException('idempotencyKey must be 1-255 printable ASCII characters.');
        }
        return [
            'idempotencyKey' => $key,
            'timeout' => self::seconds($options, 'timeout'),
            'maxRetries' => self::maxRetries($options),
        ];
    }

    /**
     * @param array<mixed> $options
     * @param list<string> $known
     */
    private static function known(array $options, array $known, string $what): void
    {
        foreach (array_keys($options) as $name) {
            if (!in_array($name, $known, true)) {
                throw new InvalidArgumentException(sprintf(
                    'Unknown %s "%s"; known: %s.',
                    $what,
                    $name,
                    implode(', ', $known),
                ));
            }
        }
    }

    private static function baseUrl(mixed $url): string
    {
        if (!is_string($url) || preg_match('#^https?://[^/?\#\s]+(/[^?\#\s]*)?$#i', $url) !== 1) {
            throw new InvalidArgumentException('baseUrl must be an http(s) URL such as https://api.example.com.');
        }
        return rtrim($url, '/');
    }

    /** @param array<mixed> $options */
    private static function seconds(array $options, string $name): ?float
    {
        $value = $options[$name] ?? null;
        if ($value === null) {
            return null;
        }
        if ((!is_int($value) && !is_float($value)) || !($value > 0) || $value > 3600) {
            throw new InvalidArgumentException(sprintf('%s must be a number of seconds above 0, at most 3600.', $name));
        }
        return (float) $value;
    }

    /** @param array<mixed> $options */
    private static function maxRetries(array $options): ?int
    {
        $value = $options['maxRetries'] ?? null;
        if ($value === null) {
            return null;
        }
        if (!is_int($value) || $value < 0 || $value > self::MAX_RETRIES_LIMIT) {
            throw new InvalidArgumentException(sprintf(
                'maxRetries must be an integer from 0 to %d.',
                self::MAX_RETRIES_LIMIT,
            ));
        }
        return $value;
    }
}
