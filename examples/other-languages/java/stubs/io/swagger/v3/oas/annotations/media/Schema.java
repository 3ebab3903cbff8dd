package io.swagger.v3.oas.annotations.media;

// A stand-in for swagger-annotations' @Schema (on Maven Central only, not in Debian): the
// generated code carries it as documentation, nothing reads it at run time.
@java.lang.annotation.Retention(java.lang.annotation.RetentionPolicy.CLASS)
public @interface Schema {
  String name() default "";
  String description() default "";
  RequiredMode requiredMode() default RequiredMode.AUTO;
  boolean enumAsRef() default false;
  Class<?> implementation() default Void.class;
  enum RequiredMode { AUTO, REQUIRED, NOT_REQUIRED }
}
