package io.swagger.v3.oas.annotations.media;

// A stand-in for swagger-annotations (see Schema.java).
@java.lang.annotation.Retention(java.lang.annotation.RetentionPolicy.CLASS)
public @interface Content {
  String mediaType() default "";
  Schema schema() default @Schema;
}
