<?php

/**
 * The SDK without Composer: copy the sdks/php folder into your project and
 * `require_once __DIR__ . '/pagamentos-php/init.php';`. It registers a PSR-4
 * autoloader for the Pagamentos\ namespace, the same mapping as composer.json.
 */

spl_autoload_register(static function (string $class): void {
    $prefix = 'Pagamentos\\';
    if (strncmp($class, $prefix, strlen($prefix)) !== 0) {
        return;
    }
    $file = __DIR__ . '/src/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
